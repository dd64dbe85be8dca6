/** The person's colour theme: the system's, or light or dark chosen here (kept in this browser). */
export type ThemeChoice = "system" | "light" | "dark";

const KEY = "orchestratia.theme";

export function themeChoice(): ThemeChoice {
  const stored = localStorage.getItem(KEY);
  return stored === "light" || stored === "dark" ? stored : "system";
}

/** Applies a choice to the page (data-theme on <html>; tokens.css reads it) and remembers it. */
export function applyTheme(choice: ThemeChoice = themeChoice()) {
  if (choice === "system") {
    localStorage.removeItem(KEY);
    delete document.documentElement.dataset.theme;
  } else {
    localStorage.setItem(KEY, choice);
    document.documentElement.dataset.theme = choice;
  }
}

/** Whether the page is dark now, whichever way it was decided (charts and the terminal pick colours by it). */
export const isDark = () => {
  const choice = themeChoice();
  return choice === "dark" || (choice === "system" && matchMedia("(prefers-color-scheme: dark)").matches);
};

/**
 * A colour of the theme as a canvas takes it (`rgb(…)`): tokens.css writes each as light-dark(), which only an
 * element's computed colour resolves, so a probe inside `within` (whose scheme it follows) reads it.
 */
export function themeColour(within: HTMLElement, name: string, fallback: string): string {
  const probe = document.createElement("span");
  probe.style.color = `var(${name}, ${fallback})`;
  within.append(probe);
  const colour = getComputedStyle(probe).color;
  probe.remove();
  return colour;
}
