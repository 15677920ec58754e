/** The version of bfs itself, reported as bfs_version. */
export const BFS_VERSION = '0.1.0'
/** The Redis version whose behaviour bfs follows, reported as redis_version. */
export const REDIS_VERSION = '7.0.15'
