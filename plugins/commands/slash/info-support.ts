/** What several of the info commands share. */
import type { ProjectResourceList, ProjectView } from "../../../core/index.js";
import type { CommandEnv } from "../env.js";

export function projectView(env: CommandEnv, cwd: string): ProjectView | undefined {
  try {
    return env.project()?.view(cwd);
  } catch {
    return undefined;
  }
}

/** The visible entries of one kind: the trusted project's first, then the global ones. */
export function scoped<K extends keyof ProjectResourceList>(
  view: ProjectView | undefined,
  kind: K,
): Array<{ scope: string; item: ProjectResourceList[K][number] }> {
  if (!view) return [];
  const local = view.trusted ? view.local[kind] : [];
  return [
    ...local.map((item) => ({ scope: "project", item })),
    ...view.global[kind].map((item) => ({ scope: "global", item })),
  ];
}
