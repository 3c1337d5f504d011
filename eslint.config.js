import js from "@eslint/js";
import tseslint from "typescript-eslint";
import nms from "./eslint/plugin-boundaries.js";

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "data/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        URL: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        structuredClone: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "error",
      "no-restricted-imports": ["error", { patterns: [{ group: ["**/plugins/**"], message: "core/ never imports from plugins/ (ARCHITECTURE.md §3)" }] }],
    },
  },
  {
    files: ["plugins/**", "test/**", "bench/**", "examples/**"],
    rules: { "no-restricted-imports": "off" },
  },
  {
    // Type tests name values only to take their types.
    files: ["test/types/**"],
    rules: { "@typescript-eslint/no-unused-vars": "off" },
  },
  {
    // Plugins reach each other through contracts, and their services through the plugin context (ctx.get), never
    // through Ts.ED's global container.
    files: ["plugins/**/*.ts", "examples/**/*.ts"],
    plugins: { nms },
    rules: {
      "nms/plugin-boundaries": "error",
      "no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "@tsed/di",
              importNames: ["injector", "inject"],
              message: "resolve services through the plugin context (ctx.get) or @Inject(), not Ts.ED's global container",
            },
          ],
        },
      ],
    },
  },
);
