export const tags = ["worktrees"];
