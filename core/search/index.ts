export { admit } from "./admit.js";
export { confirmInside, fileTimes } from "./confirm.js";
export {
  RIPGREP_ENV,
  resetSearchEngine,
  type SearchEngineInfo,
  type SearchEngineName,
  searchEngine,
} from "./engine.js";
export {
  type ContentQuery,
  candidateFiles,
  listFiles,
  type SearchOptions,
  type SearchState,
  visitFiles,
} from "./list.js";
export { compareNames, comparePaths } from "./order.js";
export { ripgrepPrefilter } from "./regex.js";
