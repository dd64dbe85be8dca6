/**
 * The authorize step of OAuth for MCP clients: a page of the hub's own that signs the person in with their hub email
 * and password (the dashboard's sign-in, with its throttling) and asks them to allow the client to act as them.
 */
import type { ConsentDescription } from "@cloudflare/workers-oauth-provider";

const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

const STYLE =
  "body{font:15px/1.5 system-ui,sans-serif;max-width:30rem;margin:3rem auto;padding:0 1rem;color:#1f2328}" +
  "label{display:block;margin:.75rem 0}input{display:block;width:100%;padding:.4rem;font:inherit;box-sizing:border-box}" +
  "button{font:inherit;padding:.4rem 1rem;margin-right:.5rem}.warn{background:#fff8c5;padding:.5rem}.error{color:#cf222e}";

/**
 * Never framed, nothing loaded from anywhere; no `form-action`, since browsers hold the redirect to the client's
 * redirect URI after the form's post to it.
 */
export const PAGE_HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};

/**
 * The page: who asks (as the client registered itself), where access goes, and the sign-in form that allows it; after
 * a refused sign-in, the reason, with the email given kept in its field.
 */
export function authorizePage(handle: string, details: ConsentDescription | null, error?: string, email = ""): string {
  const name = details ? escape(details.clientName) : "The application";
  const about = details
    ? `<p>${details.clientDomain ? `Published by <strong>${escape(details.clientDomain)}</strong>.` : "It registered itself: its name is not verified."} ` +
      `Access goes to <strong>${escape(details.redirectHost)}</strong>.</p>` +
      (details.redirectIsLoopback
        ? `<p class="warn">This sends access to an app on your computer: continue only if you just started signing in from it.</p>`
        : "")
    : "";
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>Allow ${name} · Orchestratia hub</title><style>${STYLE}</style></head><body>` +
    `<h1>Allow ${name} to work as you on this hub?</h1>${about}` +
    `<p>It will see and do what you can: read the projects you belong to and, unless you are a viewer, create and steer their tasks.</p>` +
    (error ? `<p class="error" role="alert">${escape(error)}</p>` : "") +
    `<form method="post"><input type="hidden" name="handle" value="${escape(handle)}">` +
    `<label>Email<input name="email" type="email" autocomplete="username" value="${escape(email)}" required></label>` +
    `<label>Password<input name="password" type="password" autocomplete="current-password" required></label>` +
    `<p><button name="decision" value="allow">Sign in and allow</button><button name="decision" value="deny" formnovalidate>Deny</button></p>` +
    `</form></body></html>`
  );
}
