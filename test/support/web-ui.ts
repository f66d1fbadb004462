import { join } from "node:path";

/** Screenshots the tests take of the main screens (git-ignored; a few are copied to docs/ by hand). */
export const SHOTS = join(import.meta.dirname, "../../../test-output/screenshots");
