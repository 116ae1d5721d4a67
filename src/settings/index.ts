// Settings: the user's, the project's and the local settings files, merged, with the permission
// rules they hold, and the person's trust in a repository's own files (the trust store in their
// config folder). Below the session and above git: it reads files and knows no run.
// No behaviour of its own: re-exports only.
export {
  loadSettings,
  folderTrust,
  permissionRules,
  addLocalAllowRule,
  localSettingsFile,
  settingsFiles,
  userConfigDir,
  type Settings,
  type Sourced,
  type SettingsScope,
  type FolderTrust,
  type LeftOut,
  type RepositoryServer,
  type LoadSettingsOptions,
} from './load.js';
export {
  PermissionRules,
  parseRule,
  splitRuleList,
  ruleMatches,
  suggestRules,
  writesControlFile,
  TOOL_NAMES,
  CLAUDE_CODE_TOOLS,
  type RuleVerdict,
  type ParsedRule,
  type RuleEntry,
  type RuleScope,
} from './permissions.js';
export { parseShellLine, type ShellLine, type ShellCommand } from './shell-line.js';
export {
  readSettingsFile,
  parseSettings,
  PERMISSION_MODES,
  MAX_SETTINGS_BYTES,
  type PermissionMode,
  type McpServerSettings,
  type SettingsLayer,
  type HookSettings,
} from './settings-file.js';
export { CONTROL_FOLDERS, CONTROL_ROOT_FILES, INSTRUCTION_FILE_NAMES, isControlPath } from '../tools/control-files.js';
export {
  COMMAND_FOLDERS,
  TRUSTED_FILES,
  expandedVariables,
  readMcpJsonServers,
  repositoryFiles,
  serverDigest,
  type RepositoryFiles,
} from './repository-files.js';
export {
  folderKey,
  folderRecord,
  readTrust,
  recordServerApprovals,
  recordTrust,
  trustFile,
  type FolderRecord,
  type TrustRecords,
} from './trust-store.js';
export {
  findCustomCommands,
  customCommand,
  expandCustomCommand,
  parseFrontMatter,
  MAX_COMMAND_BYTES,
  type CustomCommand,
  type CommandSource,
} from './custom-commands.js';
