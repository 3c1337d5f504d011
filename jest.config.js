/** Jest runs the TypeScript sources through swc, keeping decorator metadata (see docs/adr/0004). */
const swc = {
  jsc: {
    parser: { syntax: "typescript", decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    target: "es2022",
  },
  module: { type: "es6" },
  sourceMaps: "inline",
};

export default {
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  transform: { "^.+\\.ts$": ["@swc/jest", swc] },
  moduleNameMapper: {
    "^nms-core$": "<rootDir>/core/index.ts",
    "^nms-core/bus$": "<rootDir>/core/bus/EventBus.ts",
    "^(\\.{1,2}/.*)\\.js$": "$1",
  },
  testMatch: ["<rootDir>/core/**/*.test.ts", "<rootDir>/plugins/**/*.test.ts", "<rootDir>/test/**/*.test.ts"],
  globalSetup: "<rootDir>/test/support/globalSetup.mjs",
  globalTeardown: "<rootDir>/test/support/globalTeardown.mjs",
  testTimeout: 60000,
};
