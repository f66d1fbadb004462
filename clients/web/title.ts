/**
 * The tab says what needs attention while the user is elsewhere: its title and favicon show a running turn in the
 * open session, or how many sessions wait for the user (a decision to make).
 */
import { effect } from "@preact/signals";
import { selectedId, sessions } from "./store.js";

const ICON = (fill: string, ring: string) =>
  `data:image/svg+xml,${encodeURIComponent(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="2" y="2" width="28" height="28" rx="7" fill="#2458d6"/><text x="16" y="22" font-family="system-ui,sans-serif" font-size="17" font-weight="700" fill="#fff" text-anchor="middle">a</text>${
      fill ? `<circle cx="25" cy="7" r="6.5" fill="${fill}" stroke="${ring}" stroke-width="2"/>` : ""
    }</svg>`,
  )}`;

function setIcon(href: string): void {
  let link = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
  if (!link) {
    link = document.createElement("link");
    link.rel = "icon";
    document.head.append(link);
  }
  if (link.href !== href) link.href = href;
}

/** Keeps the title and favicon in step with the session list (call once). */
export function followTabState(): () => void {
  return effect(() => {
    const all = sessions.value;
    const open = all.find((s) => s.id === selectedId.value);
    const waiting = all.filter((s) => s.waiting).length;
    const running = all.some((s) => s.status === "running");
    const name = open?.title || "agentd";
    const prefix = waiting ? `(${waiting}) Needs you · ` : open?.status === "running" ? "● Working · " : "";
    document.title = `${prefix}${name}${name === "agentd" ? "" : " · agentd"}`;
    setIcon(waiting ? ICON("#e5a000", "#fff") : running ? ICON("#2fb45a", "#fff") : ICON("", ""));
  });
}
