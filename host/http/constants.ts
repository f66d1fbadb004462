export const API_PREFIX = "/api/v1";
/** Sent on every /api/v1 response (401s included); `Cast-API-Version` keeps clients of the original daemon working. */
export const API_VERSION_HEADERS = { "Cast-API-Version": "1", "Agentd-API-Version": "1.0.0" } as const;
