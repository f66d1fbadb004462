/** Settings → Permissions: the sandbox's state and the approval rules, each revocable (config rules are read-only). */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import type { components } from "../api/v1.js";
import { api, messageOf, ok } from "./api.js";
import { showToast } from "./store.js";

type Rule = components["schemas"]["PermissionRule"];
type Sandbox = components["schemas"]["SandboxStatus"];

const SCOPE_LABEL: Record<Rule["scope"], string> = {
  session: "This session",
  project: "Project",
  global: "Everywhere",
};

export function SandboxLine({ sandbox }: { sandbox: Sandbox | undefined }) {
  if (!sandbox) return null;
  if (sandbox.enabled) {
    return (
      <p class="sandbox ok" data-sandbox="on">
        Commands run in a sandbox (bubblewrap): network <strong>{sandbox.network}</strong>; writable: the session's
        directory, a private /tmp{sandbox.writable.length ? `, ${sandbox.writable.join(", ")}` : ""}.
      </p>
    );
  }
  if (sandbox.kind === "off") {
    return (
      <p class="sandbox warn" data-sandbox="off">
        The sandbox is turned off (config <code>sandbox: "off"</code>): commands run with all of your power.
      </p>
    );
  }
  return (
    <p class="sandbox warn" data-sandbox="none">
      Commands are not sandboxed ({sandbox.reason ?? "unavailable"}): every command is asked about.
    </p>
  );
}

export function PermissionsCard() {
  const rules = useSignal<Rule[] | null>(null);
  const sandbox = useSignal<Sandbox | undefined>(undefined);
  const load = async () => {
    try {
      rules.value = (await ok(api.GET("/api/v1/permissions/rules"))).rules;
      sandbox.value = (await ok(api.GET("/api/v1/server/status"))).sandbox;
    } catch (err) {
      showToast(messageOf(err));
    }
  };
  useEffect(() => {
    void load();
  }, []);
  const revoke = async (r: Rule) => {
    try {
      await ok(api.DELETE("/api/v1/permissions/rules/{ruleId}", { params: { path: { ruleId: r.id } } }));
      showToast(`Revoked: ${r.action} ${r.pattern}`);
      await load();
    } catch (err) {
      showToast(messageOf(err));
    }
  };
  return (
    <div class="card">
      <h3>Permissions</h3>
      <SandboxLine sandbox={sandbox.value} />
      <p class="muted">Rules: deny beats ask beats allow. Rules from config.json are listed but not editable here.</p>
      {rules.value === null ? (
        <p class="muted">Loading…</p>
      ) : rules.value.length === 0 ? (
        <p class="muted">No rules yet: answer a command with "Always allow" to add one.</p>
      ) : (
        <ul class="rules">
          {rules.value.map((r) => (
            <li key={r.id} data-rule={r.id}>
              <span class={`rule-action ${r.action}`}>{r.action}</span> <code>{r.pattern}</code>{" "}
              <span class="muted">
                {SCOPE_LABEL[r.scope]}
                {r.project ? ` · ${r.project}` : ""}
                {r.source === "config" ? " · config.json" : ""}
              </span>
              {r.source === "user" && (
                <button type="button" onClick={() => void revoke(r)} aria-label={`Revoke ${r.pattern}`}>
                  Revoke
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
