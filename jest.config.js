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
    "^nms-core/tsed$": "<rootDir>/core/tsed.ts",
    "^nms-core/testing$": "<rootDir>/core/testing/index.ts",
    "^nms-core/contracts/([a-z-]+)$": "<rootDir>/plugins/$1/contract.ts",
    "^(\\.{1,2}/.*)\\.js$": "$1",
  },
  testMatch: ["<rootDir>/core/**/*.test.ts", "<rootDir>/plugins/**/*.test.ts", "<rootDir>/test/**/*.test.ts"],
  // Example plugins are packages of their own, tested with their own runner (scripts/test-examples.mjs).
  testPathIgnorePatterns: ["/node_modules/", "<rootDir>/examples/"],
  globalSetup: "<rootDir>/test/support/globalSetup.mjs",
  globalTeardown: "<rootDir>/test/support/globalTeardown.mjs",
  testTimeout: 60000,
  // Agenda (the job scheduler) starts a keep-alive timer of half a job's lock lifetime for every run and never cancels
  // it (15 minutes for an inventory sweep): after a test file that ran a sweep, those timers alone would keep jest
  // waiting. The service itself exits explicitly after stopping (core/main.ts), so only the test runner needs this.
  forceExit: true,
  // npm test runs the files one at a time in one worker process (--maxWorkers=1): each file loads the kernel and its
  // plugins afresh, and a single process running 130-odd files grew past 4 GB and spent its time collecting garbage.
  // A worker above this after a file is replaced by a fresh one.
  workerIdleMemoryLimit: "1536MB",
};
