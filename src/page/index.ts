/** page/ owns a list page's bytes: scanning them, the items they hold, and the budget of bytes held at once. */
export { type BudgetHold, ByteBudget, RoomRefused } from './byte-budget.js';
export { BAD, CLOSED, JsonGrammar } from './json-grammar.js';
export { type ItemKey, PageItems } from './page-items.js';
export { type ItemKeys, type ScannedPage, scanPage } from './page-scan.js';
export { type ScannedSync, scanSyncPage } from './sync-scan.js';
