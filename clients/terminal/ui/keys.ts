/**
 * Keys go through one handler registered by the app at start-up, which passes them to whatever is active (the
 * composer or a picker). A component registering its own handler on mount would miss keys typed in the moment
 * between being drawn and its effect running.
 */
import type { Key } from "ink";

export type KeyHandler = (input: string, key: Key) => void;
export type KeyRoute = { current: KeyHandler | undefined };
