/** The theme choice: the system's setting, or light or dark for this browser. */
import { useState } from "preact/hooks";
import { Monitor, Moon, Sun } from "lucide";
import { applyTheme, themeChoice, type ThemeChoice } from "../theme";
import { Icon } from "./icon";

const CHOICES: [ThemeChoice, string, typeof Sun][] = [
  ["system", "System", Monitor],
  ["light", "Light", Sun],
  ["dark", "Dark", Moon],
];

export function ThemeToggle() {
  const [choice, setChoice] = useState(themeChoice);
  return (
    <div class="theme-toggle" role="radiogroup" aria-label="Theme">
      {CHOICES.map(([value, label, icon]) => (
        <button
          key={value}
          type="button"
          role="radio"
          aria-checked={choice === value}
          title={label}
          aria-label={label}
          onClick={() => {
            applyTheme(value);
            setChoice(value);
          }}
        >
          <Icon icon={icon} size={15} />
        </button>
      ))}
    </div>
  );
}
