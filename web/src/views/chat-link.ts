/**
 * A person's link to a chat (Telegram, Slack) on the account page: read, a one-use code asked for, and unlinking.
 * The link is made in the chat, out of the page's sight, so while a code waits the link is read again until the code
 * is used or expires.
 */
import { useEffect, useState } from "preact/hooks";
import { messageOf } from "../api";
import { toast } from "../ui/toasts";
import { useAction } from "./controls";

/** How often the link is read again while a code waits to be used in the chat. */
const POLL_MS = 3_000;

export interface ChatLinkApi<L extends { linked: boolean; linked_at: string | null }, C extends { expires_at: string }> {
  /** The chat's name, as toasts say it. */
  chat: string;
  read: () => Promise<L>;
  createCode: () => Promise<C>;
  unlink: () => Promise<unknown>;
}

export function useChatLink<L extends { linked: boolean; linked_at: string | null }, C extends { expires_at: string }>(api: ChatLinkApi<L, C>) {
  const [link, setLink] = useState<L | null>(null);
  const [code, setCode] = useState<C | null>(null);
  const [expired, setExpired] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const { run, busy, problem } = useAction();

  const load = () =>
    void api.read().then(
      (l) => (setLink(l), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(load, []);

  useEffect(() => {
    if (!code) return;
    const before = link?.linked_at ?? null;
    const timer = setInterval(() => {
      if (Date.parse(code.expires_at) <= Date.now()) {
        setCode(null);
        setExpired(true);
        return;
      }
      void api.read().then(
        (now) => {
          if (!now.linked || now.linked_at === before) return;
          setLink(now);
          setCode(null);
          toast(`${api.chat} linked.`);
        },
        () => undefined,
      );
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [code]);

  const requestCode = () =>
    run("link", async () => {
      setExpired(false);
      setCode(await api.createCode());
    });
  const unlink = () =>
    run("unlink", async () => {
      await api.unlink();
      setCode(null);
      setLink(await api.read());
      toast(`${api.chat} unlinked.`);
    });

  return { link, setLink, code, expired, error, load, requestCode, unlink, run, busy, problem };
}
