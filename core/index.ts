/**
 * The kernel's public API for plugin authors: import from "nms-core" (third-party
 * plugins) or from "../../core/index.js" (built-in plugins). Nothing else in core/
 * is a contract.
 */
export { definePlugin, pluginContextToken } from "./pluginhost/manifest.js";
export type {
  PluginManifest,
  PluginContext,
  PluginJobs,
  PluginRealtime,
  PublishOptions,
  JobDeclaration,
  ChannelDeclaration,
  ListenerDeclaration,
  BundleTable,
  BundleNote,
  BundleNoteCode,
  BundleExportContext,
  BundleImportContext,
  BundleImportResult,
  ExtensionPointDeclaration,
  ExtensionRegistry,
  ListenerStatus,
  ListenerCounters,
  ChannelFilter,
  CommandEnvironment,
  ListenerReport,
  CommandDeclaration,
  ProviderToken,
  ContractExport,
} from "./pluginhost/manifest.js";
export type { ConfigOf, ConfigSchema } from "./pluginhost/configSchema.js";
export type { PluginMetrics, MetricCounter, MetricGauge, MetricHistogram, MetricLabels, MetricDefinition } from "./metrics/PluginMetrics.js";
export {
  Permission,
  Authenticated,
  Public,
  PersonOnly,
  ScopeUnsupported,
  DashboardRead,
  SkeletonRead,
  WithoutStore,
  ProtocolInput,
} from "./auth/decorators.js";
export { callerScope, requireCaller, runAsSystem, assertInScope, assertNodeInScope, assertFolderInScope } from "./auth/scope.js";
export { currentCaller } from "./http/requestContext.js";
export { scopeCovers, scopeFolders, hasPermission, ROLES, PERMISSIONS, ROLE_PERMISSIONS } from "./auth/Caller.js";
export type { Caller, Role, Scope, PermissionName } from "./auth/Caller.js";
export { ApiError, badRequest, conflict, forbidden, notFound, notImplemented, storeUnavailable, unauthorized } from "./errors.js";
export { ErrorEnvelope, CreatedId, MutationOk } from "./http/models.js";
export { Body, CallerScope, Query, QueryDoc, timestampParam, tokenList, type QueryParameterDoc } from "./http/params.js";
export { decodeCursor, encodeCursor, page, sendPage, NEXT_CURSOR_HEADER, PageQuery, ReturnsPage } from "./http/pagination.js";
export { invalidCursor } from "./http/pagination.js";
export { FastJson } from "./http/fastJson.js";
export { EventBus } from "./bus/EventBus.js";
export { TurnBatcher } from "./bus/TurnBatcher.js";
export type { BusEvents } from "./bus/EventBus.js";
export { Secrets } from "./secrets/Secrets.js";
export { Store, PluginStore, ident, isoTimestamp } from "./store/Store.js";
export type { Lease, LeaseHandlers, LeaseOptions } from "./store/Lease.js";
export type { PartitionHandlers, PartitionMessage, PartitionSpace } from "./store/Partitions.js";
export type { Queryable } from "./store/Store.js";
export type { ReadDb } from "./store/Store.js";
export { PG_ERROR, pgErrorCode, isPgError, pgConstraint } from "./store/pgErrors.js";
export { textArrayLiteral, plainArrayLiteral } from "./store/arrayLiteral.js";
export { copyRows, copyWithDeadLetters, copyLinesWithDeadLetters, encodeCopyText, isRowDataError, pruneDeadLetters } from "./store/copyWriter.js";
export { journalConfigSchema, workerJournalOptions } from "./journal/config.js";
export type { JournalSettings } from "./journal/config.js";
export { insertJournalRanges, storedJournalRanges, pruneJournalRanges } from "./store/journalCommits.js";
export type { JournalRange } from "./store/journalCommits.js";
export type { CopyColumn, CopyType, CopyValueTypes, CopySpec, CopyWithDeadLettersOptions, CopyOutcome } from "./store/copyWriter.js";
export type { PgErrorCode } from "./store/pgErrors.js";
export { UUID_PATTERN, isUuid } from "./util/uuid.js";
export { WakeableSleeps } from "./util/sleeps.js";
export * from "./worker.js";
export { POOL_NAME_PATTERN, isPoolName, assertPoolName, invalidPool } from "./util/pools.js";
export { ADDRESS_BITS, parseIp, canonicalIp, isIpAddress, ipFamily, ipv4Number, formatIp, parseCidr, prefixContains } from "./util/net.js";
export type { IpFamily, IpAddress, IpPrefix } from "./util/net.js";
export { isTimeZone, localParts, nextRun, zonedTimeToUtc } from "./util/schedule.js";
export { MAX_TIMESTAMP_MS, isRfc3339, parseRfc3339 } from "./util/time.js";
export type { Frequency, ScheduleTiming } from "./util/schedule.js";
export { DayPartitions, dayStart, DAY_MS } from "./store/dayPartitions.js";
export { sqlMigrationsFrom } from "./store/Migrator.js";
export { sqlBundleTable, keysetRows, importRows, pruneRows, existing as existingIds, field as bundleField, InvalidBundleRow } from "./bundle/tables.js";
export type { SqlBundleTableSpec, BundleReference, Prepared as BundleRow } from "./bundle/tables.js";
export type { Migration } from "./store/Migrator.js";
export type { Logger } from "./logging/Logger.js";
export type { KernelConfig } from "./config/Config.js";
export { startKernel, Kernel } from "./kernel/Kernel.js";
export type { StartOptions } from "./kernel/Kernel.js";
