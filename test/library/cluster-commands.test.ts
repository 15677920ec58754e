/**
 * bloomCluster (library/cluster-commands.ts) with the real ioredis 5 and 6 `Command` classes: the
 * command it hands to `cluster.sendCommand` carries the key's slot by Redis's rule and the
 * command's read-only flag, which is what ioredis's Cluster routes on (`getSlot()`, `isReadOnly`).
 * The routing itself, against real cluster nodes, is test/distributed/cluster-clients.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { Cluster as Cluster5, Command as Command5 } from 'ioredis'
import { Cluster as Cluster6, Command as Command6 } from 'ioredis6'
import { bloomCluster, BLOOM_CLUSTER_COMMANDS, clusterSlotOf } from '../../src/index.js'
import { BUILTIN_COMMANDS } from '../../src/commands/builtin.js'
import { slotOf } from '../../src/core/key-slot.js'

/** What ioredis's Cluster reads of a command before it picks a node. */
interface Routed {
  name: string
  args: unknown[]
  getSlot(): number | null
  isReadOnly?: boolean
}

/** A cluster that keeps what it is asked to send and answers it 1 (the helper's own part, no socket). */
function keeping<C extends { promise: Promise<unknown> }>(sent: C[]) {
  return {
    options: {},
    sendCommand(command: C) {
      sent.push(command)
      ;(command as unknown as { resolve(value: unknown): void }).resolve(1)
      return command.promise
    },
  }
}

describe('bloomCluster', () => {
  it('knows every BF.* and APBF.* command of the table, read-only exactly when its row is', () => {
    // BFS.RESTORE-PART is MIGRATE's node-to-node command (docs/MIGRATE.md), never a client's.
    const rows = BUILTIN_COMMANDS.filter(
      (spec) => /^(BF|BFS|APBF)\./.test(spec.name) && spec.name !== 'BFS.RESTORE-PART',
    )
    expect(Object.keys(BLOOM_CLUSTER_COMMANDS).sort()).toEqual(rows.map((spec) => spec.name).sort())
    for (const spec of rows) {
      expect(BLOOM_CLUSTER_COMMANDS[spec.name as keyof typeof BLOOM_CLUSTER_COMMANDS], spec.name).toBe(
        spec.flags.includes('readonly'),
      )
      expect(spec.keys[0], spec.name).toBe(1)
    }
  })

  for (const [version, Command] of [
    ['5', Command5],
    ['6', Command6],
  ] as const) {
    it(`ioredis ${version}: the command carries its key's slot (Redis's rule) and its read-only flag`, async () => {
      const sent: InstanceType<typeof Command>[] = []
      const bf = bloomCluster(keeping(sent), Command)
      // ioredis's own slot function (npm cluster-key-slot) puts this key in slot 0; Redis in 13402.
      const key = '{}}:ba}bx'
      expect((new Command('GET', [key]) as unknown as Routed).getSlot()).toBe(0)
      expect(await bf.add(key, 'item')).toBe(1)
      await bf.exists('urls', 'x')
      await bf.call('APBF.EXISTS', Buffer.from('{user:1}:recent'), 'a', 'b')
      const [add, exists, window] = sent as unknown as Routed[]
      expect([add!.name, add!.getSlot(), Boolean(add!.isReadOnly)]).toEqual(['BF.ADD', 13402, false])
      expect([exists!.name, exists!.getSlot(), exists!.isReadOnly]).toEqual(['BF.EXISTS', slotOf('urls'), true])
      expect([window!.name, window!.getSlot(), window!.isReadOnly]).toEqual(['APBF.EXISTS', slotOf('user:1'), true])
      expect(clusterSlotOf('{user:1}:recent')).toBe(slotOf('user:1'))
    })

    it(`ioredis ${version}: a key prefix is put before the key and counted in its slot; an unknown command is refused`, async () => {
      const sent: InstanceType<typeof Command>[] = []
      const bf = bloomCluster(keeping(sent), Command, { keyPrefix: 'app:' })
      await bf.madd('seen', 'a', 'b')
      const [madd] = sent as unknown as Routed[]
      expect(madd!.args).toEqual(['app:seen', 'a', 'b'])
      expect(madd!.getSlot()).toBe(slotOf('app:seen'))
      await expect(bf.call('GET' as 'BF.ADD', 'k')).rejects.toThrow(TypeError)
    })
  }

  it('takes the ioredis 5 and 6 Cluster and Command types as they are (type-checked by npm run typecheck)', () => {
    const five = new Cluster5([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true })
    const six = new Cluster6([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true, keyPrefix: 'p:' })
    expect(typeof bloomCluster(five, Command5).exists).toBe('function')
    expect(typeof bloomCluster(six, Command6).mexists).toBe('function')
    five.disconnect()
    six.disconnect()
  })
})
