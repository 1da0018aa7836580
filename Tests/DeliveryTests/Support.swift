import Delivery
import Foundation
import Notifications

/// The APNs token of test device `n`.
func apnsToken(_ n: Int) throws -> PushToken { try .apns(validating: String(format: "%064x", n)) }

let configuration = EmitConfiguration(grace: 7200, push: PushConfiguration(apnsTopic: "org.example.quran"), batchSize: 3)

/// A sink that takes everything and remembers what it was handed, in order. Used from one task at a time.
final class RecordingSink: Sink, @unchecked Sendable {
    let name = "recording"
    var handed: [(key: String, fireAt: Date)] = []
    func deliver(_ records: [OutboxRecord]) throws -> [Int64: DeliveryOutcome] {
        handed += records.map { ($0.idempotencyKey, $0.fireAt) }
        return Dictionary(uniqueKeysWithValues: records.map { ($0.id, .delivered()) })
    }
}
