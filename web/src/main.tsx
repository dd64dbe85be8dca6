/** The dashboard's entry: applies the person's theme, then renders the app into #app. */
import { render } from "preact";
import { App } from "./app";
import { applyTheme } from "./theme";
import "./tokens.css";
import "./base.css";
import "./styles.css";
import "./shell.css";
import "./phone.css";

applyTheme();
render(<App />, document.getElementById("app")!);
