/** What the agent's last commit changed, as `orchestratia task complete` measured it: counts, then each file. */
import type { Task } from "../types";

type Stats = NonNullable<Task["git_diff_stats"]>;

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function DiffStats({ stats }: { stats: Stats }) {
  const unlisted = stats.files_changed - stats.files.length - stats.binary_files.length;
  return (
    <div class="diff-stats">
      <p class="diff-summary">
        <strong>{plural(stats.files_changed, "file changed", "files changed")}</strong>, <span class="ins">+{stats.insertions}</span>{" "}
        <span class="del">−{stats.deletions}</span>
        {stats.head_commit && (
          <>
            {" "}
            · commit <code>{stats.head_commit}</code>
            {stats.base_commit ? (
              <>
                {" "}
                against <code>{stats.base_commit}</code>
              </>
            ) : (
              " against its parent"
            )}
          </>
        )}
      </p>
      {stats.files.length > 0 && (
        <table class="diff-files">
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">Insertions</th>
              <th scope="col">Deletions</th>
            </tr>
          </thead>
          <tbody>
            {stats.files.map((f) => (
              <tr key={f.path}>
                <td>
                  <code>{f.path}</code>
                </td>
                <td class="ins">+{f.insertions}</td>
                <td class="del">−{f.deletions}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {stats.binary_files.length > 0 && (
        <>
          <h4>Binary files</h4>
          <ul class="diff-binary">
            {stats.binary_files.map((path) => (
              <li key={path}>
                <code>{path}</code>
              </li>
            ))}
          </ul>
        </>
      )}
      {unlisted > 0 && <p class="muted">{plural(unlisted, "more file is", "more files are")} not listed.</p>}
    </div>
  );
}
