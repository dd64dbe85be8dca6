/** The close codes the hub's sockets use (src/room/sockets.ts). */
/** Access to the project was revoked. */
export const CLOSE_REVOKED = 4003;
/** The project was deleted, or the key behind the socket revoked. */
export const CLOSE_GONE = 4004;
