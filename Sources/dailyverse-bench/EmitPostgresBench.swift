import AppSchema
import ContentStore
import Delivery
import Foundation
import Logging
import Notifications
import PostgresNIO
import Storage

extension EmitBench {
    /// A day of emission into PostgreSQL by `SharedEmitter` (one process), against the same number of rows of the same
    /// size written three times more in the same run: by `COPY` into a table with no index (what PostgreSQL takes
    /// fastest: goal ratio ≥ 0.5), by `COPY` into a table made like the outbox, with its indexes (the least writing
    /// these rows can cost: `ratio_to_outbox_copy`), and by batched `INSERT`s of `batch` rows each into a table with no
    /// index (goal ≥ 0.8).
    func runPostgres(_ server: String) async throws {
        let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-emit-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        // The installation: built in SQLite as the SQLite run builds it, copied into PostgreSQL; the content stays in
        // SQLite, as serve's content copy.
        let (content, zones) = try installation(in: folder)
        let dayStart = Self.dayStart
        try await BenchDatabase.withScratch(server, prefix: "dv_emit") { address, password in
            let store = try await PostgresStore.open(address, password: password, schema: .dailyVerse, logger: logger, maximumConnections: 2)
            let copy = try await PostgresStore.connect(address, password: password, logger: logger)
            _ = try await StoreCopy.copy(from: content, into: copy, address: address, schema: .dailyVerse, logger: logger)
            let session = PostgresTransaction(connection: copy, logger: logger)
            try await session.rows("VACUUM ANALYZE")
            print(
                "devices: \(devices) over \(zones.count) zones, copied into PostgreSQL; passes every \(step) min for 24 h, writing \(ahead) min ahead"
            )

            let emitter = SharedEmitter(
                store: store, content: content,
                configuration: EmitConfiguration(
                    grace: 7200, push: PushConfiguration(apnsTopic: "org.example.quran"), batchSize: batch, ahead: Double(ahead * 60)),
                logger: logger)
            let clock = ContinuousClock()
            var queued = 0
            let emitStart = clock.now
            var now = dayStart
            while now < dayStart.addingTimeInterval(86_400) {
                now = now.addingTimeInterval(Double(step * 60))
                queued += try await emitter.run(now: now).queued
            }
            let emitSeconds = (clock.now - emitStart).seconds
            guard
                let sample = try await session.rows("SELECT headers, payload FROM outbox WHERE status = 'pending' LIMIT 1").first
            else { throw EmitBenchFailed(description: "no outbox row was written") }
            let (headers, payload) = try sample.decode((String, String).self)
            print(String(format: "emission: %d payloads in %.2f s", queued, emitSeconds))

            let columns = """
                (device_seq bigint NOT NULL, device_id text NOT NULL, platform text NOT NULL, local_date date NOT NULL,
                fire_at double precision NOT NULL, headers text NOT NULL, payload text NOT NULL, status text NOT NULL,
                created_at double precision NOT NULL)
                """
            try await session.rows(PostgresQuery(unsafeSQL: "CREATE TABLE raw_copy " + columns))
            try await session.rows(PostgresQuery(unsafeSQL: "CREATE TABLE raw_insert " + columns))
            let deviceID = "00000000-0000-4000-8000-000000000000"

            // COPY, in text format: one line a row, as fast as the server takes them.
            var values = CopyTextRows()
            for value in [deviceID, "apns", "2025-03-10", "1741593600", headers, payload, "pending", "1741593600"] { values.text(value) }
            let line = String(buffer: values.buffer)
            let total = queued
            func copyRows(into table: String) async throws -> Double {
                let start = clock.now
                try await session.copy(
                    into: table,
                    columns: ["device_seq", "device_id", "platform", "local_date", "fire_at", "headers", "payload", "status", "created_at"]
                ) { writer in
                    var buffer = ByteBuffer()
                    for n in 0..<total {
                        buffer.writeString("\(n + 1)\t")
                        buffer.writeString(line)
                        buffer.writeString("\n")
                        if buffer.readableBytes > 1 << 20 {
                            try await writer.write(buffer)
                            buffer.clear()
                        }
                    }
                    if buffer.readableBytes > 0 { try await writer.write(buffer) }
                }
                return (clock.now - start).seconds
            }
            let copySeconds = try await copyRows(into: "raw_copy")
            print(String(format: "COPY: %d rows in %.2f s", queued, copySeconds))
            // The same COPY into a table made like the outbox (its key, its index of pending rows and its one row per
            // device and local date): what writing these rows costs at the least, whoever writes them. The emitter
            // does this and more (the queue, the devices), so its ratio to this COPY is its overhead, and the ratio of
            // this COPY to the plain one is the most `ratio_to_copy` can be with the outbox's indexes.
            try await session.rows("CREATE TABLE raw_outbox (LIKE outbox INCLUDING ALL)")
            let outboxCopySeconds = try await copyRows(into: "raw_outbox")
            print(
                String(
                    format: "COPY into a table like the outbox (its indexes): %d rows in %.2f s; ratio to the plain COPY %.2f",
                    queued, outboxCopySeconds, copySeconds / outboxCopySeconds))

            // Batched INSERTs: `batch` rows a statement, every row's values sent (one array parameter a column, as the
            // emitter sends them), each statement its own transaction.
            let insertStart = clock.now
            var written = 0
            while written < queued {
                let count = min(batch, queued - written)
                let seqs = (written..<(written + count)).map { Int64($0 + 1) }
                let ids = [String](repeating: deviceID, count: count)
                let (headerColumn, payloadColumn) = ([String](repeating: headers, count: count), [String](repeating: payload, count: count))
                try await session.rows(
                    """
                    INSERT INTO raw_insert (device_seq, device_id, platform, local_date, fire_at, headers, payload, status, created_at)
                    SELECT s, i, 'apns', '2025-03-10', 1741593600, h, p, 'pending', 1741593600
                    FROM unnest(\(seqs)::int8[], \(ids)::text[], \(headerColumn)::text[], \(payloadColumn)::text[]) AS t(s, i, h, p)
                    """)
                written += count
            }
            let insertSeconds = (clock.now - insertStart).seconds
            print(String(format: "batched INSERTs: %d rows in %.2f s (%d a statement)", queued, insertSeconds, batch))
            try await copy.close()
            await store.close()
            let rate = Double(queued) / emitSeconds
            print(String(format: "ratio_to_insert=%.2f (goal 0.8)", insertSeconds / emitSeconds))
            print(String(format: "ratio_to_outbox_copy=%.2f", outboxCopySeconds / emitSeconds))
            print(String(format: "emit store=postgres payloads_per_s=%.0f ratio_to_copy=%.2f", rate, copySeconds / emitSeconds))
        }
    }
}

struct EmitBenchFailed: Error, CustomStringConvertible { let description: String }
