/**
 * The ACL users at start (redis 7.0 acl.c ACLLoadUsersAtStartup): `requirepass` as the default
 * user's password, then either the config file's `user` lines or the aclfile, never both. Any
 * error stops the start, with redis's words.
 */
import { readFileSync } from 'node:fs'
import { AclUsers } from './acl-users.js'
import type { AclTable } from './acl-commands.js'
import { ConfigError, type Config } from '../../../runtime/config.js'
import { strerror } from '../../../store/disk-error.js'

/** redis ACLLoadUsersAtStartup's words for `user` lines and an aclfile together. */
const BOTH =
  'Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.'

export function loadUsersAtStart(table: AclTable, config: Config): AclUsers {
  const acl = new AclUsers(table, () => config)
  if (config.requirepass !== '') acl.setDefaultPassword(config.requirepass)
  if (config.aclfile !== '' && config.user.length > 0) throw new ConfigError(BOTH)
  const error = acl.loadConfigured(config.user)
  if (error !== undefined) throw new ConfigError(error)
  if (config.aclfile === '') return acl
  let text: string
  try {
    text = readFileSync(config.aclfile, 'latin1')
  } catch (failure) {
    const reason = strerror((failure as NodeJS.ErrnoException).code ?? '')
    throw new ConfigError(
      `Aborting Redis startup because of ACL errors: Error loading ACLs, opening file '${config.aclfile}': ${reason}`,
    )
  }
  const errors = acl.loadFile(text, config.aclfile)
  if (errors !== undefined) throw new ConfigError(`Aborting Redis startup because of ACL errors: ${errors}`)
  return acl
}
