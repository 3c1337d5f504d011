/**
 * The values each entry point of the `nms-core` package exports, by name: removing or renaming one breaks third-party
 * plugins, so it must be a deliberate change of this list (and of the kernel's version). Types are pinned by
 * test/types/plugin-api.ts, which `npm run typecheck` compiles.
 */
const names = async (path: string) => Object.keys((await import(path)) as object).sort();

describe("the nms-core package's exported values", () => {
  it("nms-core", async () => {
    expect(await names("nms-core")).toEqual(
      [
        ...["definePlugin", "pluginContextToken", "sqlMigrationsFrom", "startKernel", "Kernel", "EventBus", "Secrets", "Store", "PluginStore"],
        ...["Permission", "Authenticated", "Public", "PersonOnly", "ScopeUnsupported", "DashboardRead", "SkeletonRead", "WithoutStore", "ProtocolInput"],
        ...["callerScope", "requireCaller", "currentCaller", "scopeCovers", "scopeFolders", "hasPermission", "ROLES", "PERMISSIONS", "ROLE_PERMISSIONS"],
        ...["assertInScope", "assertNodeInScope", "assertFolderInScope", "CallerScope", "Query", "QueryDoc", "timestampParam", "tokenList"],
        ...["ApiError", "badRequest", "conflict", "forbidden", "notFound", "notImplemented", "storeUnavailable", "unauthorized"],
        ...["ErrorEnvelope", "CreatedId", "MutationOk", "Body"],
        ...["decodeCursor", "encodeCursor", "page", "sendPage", "invalidCursor", "NEXT_CURSOR_HEADER", "PageQuery", "ReturnsPage", "FastJson"],
        ...["ident", "isoTimestamp", "PG_ERROR", "pgErrorCode", "isPgError", "pgConstraint", "textArrayLiteral", "plainArrayLiteral"],
        ...["DayPartitions", "dayStart", "DAY_MS", "timeOrderedUuid", "TurnBatcher", "startUdpReader", "bindDatagramSocket", "batchedUdpAvailable"],
        ...["sumMirrorCounts"],
        ...["compileSafeRegex", "regexUnsafeReason", "REGEX_MAX_COUNT", "REGEX_MAX_GROUP_REPEAT"],
        ...["UUID_PATTERN", "isUuid", "POOL_NAME_PATTERN", "isPoolName", "assertPoolName", "invalidPool"],
        ...["ADDRESS_BITS", "parseIp", "canonicalIp", "isIpAddress", "ipFamily", "ipv4Number", "formatIp", "parseCidr", "prefixContains"],
        ...["isTimeZone", "localParts", "nextRun", "zonedTimeToUtc", "runAsSystem", "parseRfc3339", "isRfc3339", "MAX_TIMESTAMP_MS"],
        ...["InvalidBundleRow", "bundleField", "existingIds", "importRows", "keysetRows", "pruneRows", "sqlBundleTable"],
        ...["copyRows", "copyWithDeadLetters", "copyLinesWithDeadLetters", "encodeCopyText", "isRowDataError", "pruneDeadLetters", "copyText"],
        ...["Journal", "JournalReader", "RECORD_HEADER_BYTES", "compiledModuleUrl", "journalConfigSchema", "workerJournalOptions"],
        ...["insertJournalRanges", "storedJournalRanges", "pruneJournalRanges", "JournalPart", "journalDirs", "WakeableSleeps"],
      ].sort(),
    );
  });

  it("nms-core/worker: what a plugin's worker thread may load", async () => {
    expect(await names("nms-core/worker")).toEqual(
      [
        ...["Journal", "JournalReader", "RECORD_HEADER_BYTES", "timeOrderedUuid", "compileSafeRegex", "regexUnsafeReason", "REGEX_MAX_COUNT"],
        ...["REGEX_MAX_GROUP_REPEAT", "startUdpReader", "compiledModuleUrl", "copyText", "ipv4Number", "JournalPart", "journalDirs"],
        ...["bindDatagramSocket", "batchedUdpAvailable", "sumMirrorCounts"],
      ].sort(),
    );
  });

  it("nms-core/testing", async () => {
    expect(await names("nms-core/testing")).toEqual(["TEST_ADMIN_TOKEN", "createDatabase", "startTestKernel"]);
  });

  it("nms-core/tsed: the Ts.ED API plugins build with", async () => {
    const tsed = await names("nms-core/tsed");
    expect(tsed).toEqual(
      expect.arrayContaining(["Controller", "Inject", "Injectable", "PathParams", "QueryParams", "Context", "Get", "Post", "Returns", "Required"]),
    );
  });

  it("nms-core/contracts/<id>: the built-in plugins' contracts", async () => {
    expect(await names("nms-core/contracts/inventory")).toEqual(
      [
        "Classifier",
        "Credentials",
        "DiscoveryImport",
        "Folders",
        "FOLDER_RANGES_VIEW",
        "InventoryLimits",
        "NODE_DIRECTORY_VIEW",
        "NodeAddresses",
        "NodeFacts",
        "PROFILE_DIRECTORY_VIEW",
      ].sort(),
    );
    expect(await names("nms-core/contracts/polling")).toEqual(
      [
        "EMBEDDED_POOL",
        "HostCounters",
        "METRICS",
        "PASSIVE_RECEIVERS_POINT",
        "RAW_COUNTER_METRICS",
        "RAW_COUNTER_MIB_NAMES",
        "REPORT_INTERFACES_VIEW",
        "REPORT_SAMPLES_VIEW",
        "SNMP_AGENT_STATUS",
        "isRawCounterMetric",
      ].sort(),
    );
    // alerts' contract: bus events, the token other plugins' rules raise incidents through, the root-cause links
    // notifications read, and the views reports read.
    expect(await names("nms-core/contracts/alerts")).toEqual(["AlertSymptoms", "EVENT_METRIC", "EventAlerts", "REPORT_ACKS_VIEW", "REPORT_HISTORY_VIEW"]);
    // events' and flows' contracts: types, the bus events, the views reports read, and the fast path's mirror (SyslogMirror, its generations).
    expect(await names("nms-core/contracts/events")).toEqual(["MIRROR_GENERATIONS", "REPORT_EVENTS_VIEW", "SyslogMirror"]);
    expect(await names("nms-core/contracts/flows")).toEqual(
      ["REPORT_ASN_NAMES_VIEW", "REPORT_ASN_PREFIXES_VIEW", "REPORT_FLOWS_1H_VIEW", "REPORT_FLOWS_1M_VIEW"].sort(),
    );
    expect(await names("nms-core/contracts/notifications")).toEqual(["CHANNEL_KINDS_POINT", "DeliveryError", "LIFECYCLE_POINTS", "ReportDelivery"]);
    // The extension points third parties contribute report section kinds and analysis tools to.
    expect(await names("nms-core/contracts/reports")).toEqual(["REPORT_SECTIONS_POINT"]);
    expect(await names("nms-core/contracts/analysis")).toEqual(["TOOLS_POINT"]);
  });
});
