import "./styles.css";
import { render } from "preact";
import { App } from "./app.js";
import { applyTheme } from "./store.js";

applyTheme();
matchMedia("(prefers-color-scheme: dark)").addEventListener("change", applyTheme);
const root = document.getElementById("app");
if (root) render(<App />, root);
