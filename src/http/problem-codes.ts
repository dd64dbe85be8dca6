/**
 * Every `code` a problem document can carry, with its meaning. The `Problem`
 * class only takes these, so a new code cannot ship without its line here;
 * the list is served at /docs/problems (where each problem's `type` points)
 * and in the API's description.
 */
export const PROBLEM_CODES = {
  // The request itself
  MALFORMED_REQUEST: "The request cannot be understood as sent (a parameter or header is malformed).",
  MALFORMED_JSON: "The body is not valid JSON. `detail` quotes the parser.",
  BODY_UNREADABLE: "The body could not be read: the connection broke off or its encoding is malformed.",
  PAYLOAD_TOO_LARGE: "The body is larger than `MAX_BODY_BYTES` (or, for a DataRef upload, than its declared size).",
  VALIDATION_FAILED: "A field breaks a rule of the schema. `errors` lists each as `{path, message}`.",
  METHOD_NOT_ALLOWED: "The path exists but not with this method. `Allow` names the methods it has.",
  NOT_FOUND: "No such thing, or it belongs to a project the caller cannot see (the hub does not tell the two apart).",
  INVALID_BOOKMARK: "`X-D1-Bookmark` is not a bookmark the hub handed out (or is over 128 characters): send back one a response carried, or none.",
  INVALID_CURSOR: "The `cursor` of a list was not one the hub handed out.",
  UPGRADE_REQUIRED: "This path is a WebSocket: send `Upgrade: websocket`.",
  HTTP_ERROR: "The request was refused by the HTTP layer before reaching the hub's own checks.",
  RATE_LIMITED: "Too many attempts. `Retry-After` says how many seconds to wait.",
  UNSUPPORTED_MEDIA_TYPE:
    "The body's `Content-Type` or `Content-Encoding` is not one this endpoint reads (OTLP: `application/json` or `application/x-protobuf`, optionally `gzip`).",
  MALFORMED_EXPORT: "The body is not a valid OTLP export of this signal in its encoding. `detail` says where decoding stopped.",
  // Credentials and permissions
  UNAUTHORIZED: "No credentials, or credentials of the wrong kind for this surface.",
  INVALID_TOKEN: "The access token is malformed, expired, tampered with, or its account is gone.",
  INVALID_API_KEY: "The API key is unknown or has been revoked (a server re-registered under its name gets a new one).",
  PERSONAL_TOKEN_EXPIRED: "The personal access token has passed its expiry: its person makes a new one (account page).",
  PERSONAL_TOKEN_REVOKED: "The personal access token was revoked by its person.",
  TOKEN_SCOPE:
    "A personal access token does not allow this: a `read` token changes nothing, and a token limited to some projects cannot use routes that span the hub (people, servers, registration tokens).",
  PERSONAL_TOKEN_NOT_ACCEPTED:
    "This needs a person signed in (an access token from sign-in): personal access tokens cannot manage tokens, change a password or open sockets.",
  INVALID_CREDENTIALS: "Wrong email or password.",
  INVALID_REFRESH_TOKEN: "The refresh token is missing, unknown, expired or revoked: sign in again.",
  REFRESH_TOKEN_REUSED: "A refresh token was used twice: every token of that sign-in is revoked, as it may have been stolen.",
  INVALID_BOOTSTRAP_TOKEN: "The bootstrap call did not carry the `BOOTSTRAP_TOKEN` secret.",
  ALREADY_BOOTSTRAPPED: "The hub already has users: bootstrap creates only the first admin.",
  INVALID_REGISTRATION_TOKEN: "The registration token is malformed, unknown, expired, revoked or used up.",
  FORBIDDEN: "Authenticated, but the caller's role does not allow this.",
  FORBIDDEN_ORIGIN: "A browser page of another origin called the MCP endpoint: only the hub's own origin and `CORS_ORIGINS` may (DNS rebinding).",
  FORBIDDEN_HOST: "The MCP endpoint was called at a host name other than `PUBLIC_URL`'s (DNS rebinding).",
  NOT_ALLOWED: "The caller may see this but not do this to it (only the assignee completes a task, for instance).",
  REMOTE_EXEC_DISABLED:
    "The project's `remote_exec` setting is off, so agents may not run commands in or send files to its sessions: an admin turns it on (`PATCH /api/v1/projects/{id}`).",
  NO_ACCOUNT: "An external identity provider's token was valid, but no hub account has its email.",
  ACCOUNT_DEACTIVATED: "The account was deactivated by an admin: none of its tokens, sign-ins or sockets is honoured until an admin reactivates it.",
  INVITE_EMAIL_MISMATCH: "The invite names another email address: only that address may accept it.",
  INVALID_URL: "The signed URL is malformed, expired or tampered with.",
  URL_NOT_FOR_THIS: "The signed URL is valid but for another object or method.",
  // Conflicts with the hub's state
  CONFLICT: "The request conflicts with the current state.",
  INVALID_TRANSITION: "The task's status does not allow this action (the lifecycle table in the README says which do).",
  UNRESOLVED_DEPENDENCIES: "The task is blocked: a `blocks` or `input` dependency has not resolved yet.",
  RESULT_CONFLICT: "The task is already done with a different result (the same result again is a no-op).",
  TASK_IMMUTABLE: "The task has left `pending`: its spec, type, requirements, payload and dependencies no longer change.",
  TASK_ID_TAKEN: "A task-format request reused an `id` of this project with a different body.",
  TEMPLATE_NAME_TAKEN: "A template of that name exists in the project.",
  TEMPLATE_IN_USE: "A schedule or trigger uses the template: delete those first.",
  TRIGGER_PAUSED: "The trigger is paused: the call made nothing (resume it with `PATCH .../triggers/{id}` `{paused: false}`).",
  DEPENDENCY_CYCLE: "The dependency would close a cycle.",
  CONCURRENT_CHANGE: "The task changed while the request was being decided: read it again and retry.",
  INTERVENTION_CLOSED: "The intervention has already been answered or has expired.",
  TASK_AWAITING_APPROVAL:
    "An agent created the task in a project that approves agents' tasks: a person approves it (`POST /api/v1/tasks/{id}/approve`) before it is started, planned or auto-assigned.",
  NOT_AWAITING_APPROVAL: "The task is not waiting for approval: it was approved already, or never needed to be.",
  BUDGET_HELD:
    "A budget over its `hold` or `stop` threshold holds the task's scope (its project, or a task graph it is in): nothing there is assigned or started until the budget is raised, its actions changed, it is deleted or its period ends. `budget_id` names it.",
  AMBIGUOUS_TASK_ID: "A task-format request `id` names tasks in several of the caller's projects: add `project_id`.",
  AMBIGUOUS_SESSION: "A session name matches open sessions on several servers: add `server_name`.",
  SESSION_NAME_TAKEN: "An open session of that name already exists on this server.",
  SERVER_NAME_TAKEN: "A server of that name exists and the registration (or renaming) may not take it over.",
  SERVER_HAS_ACCESS_GRANTS: "The server takes part in live SSH access grants: revoke them before removing it. `grant_ids` names them.",
  EMAIL_TAKEN: "A user with that email exists.",
  CANNOT_DELETE_SELF: "Admins cannot delete their own account.",
  CANNOT_DEACTIVATE_SELF: "Admins cannot deactivate their own account.",
  INVITE_GONE: "The invite link was used already, has expired or was withdrawn: ask an admin for a new one.",
  DAEMON_OFFLINE: "The server's daemon is not connected, so it cannot start or reach a session now.",
  SESSION_ENDED: "The session has ended (closed or failed): its machine is no longer reached through it.",
  DAEMON_TIMEOUT: "The daemon did not answer within the time allowed (a remote command's `timeout`, at most 120 s; 15 s for a session's files).",
  FILE_CHANGED:
    "The file changed on the session's machine since it was read: its `expected_sha256` is no longer the file's. `current_sha256` and `current_mtime` say what it is now (null: it was deleted).",
  FILE_TOO_LARGE: "The file is larger than a session's files may be through the hub. `limit` names the bound in bytes.",
  PATH_DENIED: "The session's daemon refused the path: it leads outside the session's root (through a symlink) or its user may not open it.",
  NO_WORKING_DIRECTORY: "The session has no working directory its daemon can find, so its files have no root.",
  DAEMON_ERROR: "The session's daemon failed to do what was asked (an I/O error on its machine). `detail` says what it answered.",
  DATAREF_PENDING: "The DataRef has no bytes yet: upload them first.",
  FILE_TRANSFER_SETTLED: "The upload was acknowledged already, or the download already answered: a transfer is settled once.",
  LENGTH_REQUIRED: "An upload streamed to storage must say its size: send `Content-Length`.",
  DATAREF_IMMUTABLE: "The DataRef's bytes are uploaded (or being uploaded) and cannot change.",
  IDEMPOTENCY_KEY_IN_FLIGHT: "A request with this `Idempotency-Key` is still being handled: retry once it has finished.",
  IDEMPOTENCY_KEY_REUSED: "This `Idempotency-Key` was used with a different request.",
  IDEMPOTENT_SECRET_NOT_REPLAYED: "The request with this `Idempotency-Key` succeeded, but its answer held a secret shown only once.",
  IDEMPOTENT_REGISTRATION_STALE: "A repeated registration cannot hand its API key out again: the token was revoked or the server has been re-keyed since.",
  // What the request carried
  SIZE_MISMATCH: "The uploaded bytes are not as many as the DataRef declared.",
  SHA256_MISMATCH: "The uploaded bytes do not hash to the DataRef's declared sha256; nothing was kept.",
  RANGE_NOT_SATISFIABLE: "The `Range` lies outside the DataRef's bytes.",
  INCOMPATIBLE_PROTOCOL: "The agent speaks none of the protocol versions this hub speaks (see `GET /api/v1/health`).",
  // The hub and its neighbours
  NOT_CONFIGURED: "A feature's secret is not set on this hub (e.g. `DATA_KEY` for webhooks, the bot token for Telegram).",
  TELEGRAM_REFUSED: "Telegram's Bot API refused the call; `detail` says what it answered.",
  SLACK_REFUSED: "Slack could not be reached or failed to answer (its Web API); `detail` says what happened.",
  DATABASE_UNAVAILABLE: "The database is not answering.",
  PROJECT_MOVING: "An admin is moving the project to another shard: its writes wait until the move ends. Retry after `Retry-After` seconds.",
  ARCHIVE_UNAVAILABLE: "An archived object the answer needs is missing or unreadable in storage; `detail` names it. The hub logs it; try again later.",
  USAGE_NOT_RECORDED: "The project could not keep the export's usage just now, and nothing of it was kept: send it again (OTLP exporters retry by themselves).",
  INTERNAL_ERROR: "A failure inside the hub. `request_id` names it in the hub's logs; please report it.",
} as const;

export type ProblemCode = keyof typeof PROBLEM_CODES;

/** The fragment of /docs/problems that explains a code: `VALIDATION_FAILED` → `validation-failed`. */
export const problemAnchor = (code: string) => code.toLowerCase().replaceAll("_", "-");

/** Where a problem's `type` points: the code's entry in the list (a reference resolved against the hub's address). */
export const problemType = (code: ProblemCode) => `/docs/problems#${problemAnchor(code)}`;
