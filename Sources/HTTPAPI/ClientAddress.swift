import Diagnostics
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IP address or a CIDR block (`10.0.0.0/8`, `2001:db8::/32`, `127.0.0.1`): one entry of `trusted_proxies`.
public struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    /// The network's bytes (4 or 16) and how many leading bits must match.
    let bytes: [UInt8]
    let prefix: Int
    public let description: String

    /// Parses one entry; nil when it is not an address or a block.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let bytes = AddressRange.bytes(String(parts[0])) else { return nil }
        let bits = bytes.count * 8
        if parts.count == 2 {
            guard (1...3).contains(parts[1].count), parts[1].allSatisfy(\.isASCII), let prefix = Int(parts[1]), (0...bits).contains(prefix)
            else { return nil }
            self.prefix = prefix
        } else {
            prefix = bits
        }
        self.bytes = bytes
        description = text
    }

    /// Whether `address` (its bytes) is inside this block.
    func contains(_ address: [UInt8]) -> Bool {
        guard address.count == bytes.count else { return false }
        var left = prefix
        for (a, b) in zip(address, bytes) where left > 0 {
            let mask: UInt8 = left >= 8 ? 0xFF : ~(0xFF >> UInt8(left))
            guard a & mask == b & mask else { return false }
            left -= 8
        }
        return true
    }

    /// What the per-address throttles count a client under: an IPv4 address as it is, an IPv6 address by its /64
    /// network (`2001:db8:1:2::/64`), since one subscriber is handed a whole /64 (often more) and picks any address
    /// in it; anything else (`local`) as it is.
    public static func throttleKey(_ client: String) -> String {
        guard let bytes = bytes(client) else { return client }
        guard bytes.count == 16 else { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    /// An address's bytes: 4 for IPv4 (an IPv4-mapped IPv6 address is its IPv4 address), 16 for IPv6; nil otherwise.
    static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return Array(bytes[12...]) }
        return bytes
    }
}

/// The proxies whose forwarding headers are believed (`trusted_proxies`): a request from one of them carries its
/// client's address in `Forwarded` (RFC 7239) or `X-Forwarded-For`, read right to left past every trusted hop. From
/// any other peer those headers are ignored, since a client can write them as it likes.
public struct TrustedProxies: Sendable, Equatable {
    public let ranges: [AddressRange]

    public static let none = TrustedProxies(ranges: [])

    public init(ranges: [AddressRange]) { self.ranges = ranges }

    /// A comma- or space-separated list of addresses and CIDR blocks; an entry that is neither is an error naming it.
    public init(parsing list: String) throws(TrustedProxiesError) {
        var ranges: [AddressRange] = []
        for entry in list.split(whereSeparator: { $0 == "," || $0 == " " }) {
            guard let range = AddressRange(String(entry)) else { throw TrustedProxiesError(entry: String(entry)) }
            ranges.append(range)
        }
        self.ranges = ranges
    }

    func trusts(_ address: String) -> Bool {
        guard let bytes = AddressRange.bytes(address) else { return false }
        return ranges.contains { $0.contains(bytes) }
    }

    /// The client's address: the peer's, unless the peer is a trusted proxy; then the rightmost address of the
    /// forwarding chain that is not itself a trusted proxy (the leftmost when all are). `Forwarded` wins over
    /// `X-Forwarded-For` when both are sent. A malformed chain leaves the peer's address.
    public func client(peer: String, forwarded: String?, forwardedFor: String?) -> String {
        guard !ranges.isEmpty, trusts(peer) else { return peer }
        let chain: [String]
        if let forwarded, !forwarded.isEmpty {
            chain = Self.forwardedFor(forwarded)
        } else if let forwardedFor, !forwardedFor.isEmpty {
            chain = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        } else {
            return peer
        }
        guard !chain.isEmpty, chain.allSatisfy({ AddressRange.bytes($0) != nil }) else { return peer }
        for hop in chain.reversed() where !trusts(hop) { return hop }
        return chain[0]
    }

    /// The `for=` addresses of a `Forwarded` header, in order, without quotes, brackets or ports
    /// (`for="[2001:db8::1]:4711"` is `2001:db8::1`). An element without `for=` makes the chain unusable.
    static func forwardedFor(_ header: String) -> [String] {
        var addresses: [String] = []
        for element in header.split(separator: ",") {
            let pairs = element.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let pair = pairs.first(where: { $0.lowercased().hasPrefix("for=") }) else { return [] }
            var value = pair.dropFirst(4)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
            if value.hasPrefix("[") {
                guard let close = value.firstIndex(of: "]") else { return [] }
                addresses.append(String(value[value.index(after: value.startIndex)..<close]))
            } else if let colon = value.firstIndex(of: ":"), value.filter({ $0 == ":" }).count == 1 {
                addresses.append(String(value[..<colon]))  // an IPv4 address with a port
            } else {
                addresses.append(String(value))
            }
        }
        return addresses
    }
}

/// A `trusted_proxies` entry that is not an IP address or a CIDR block.
public struct TrustedProxiesError: UserFacingError, Sendable {
    public let entry: String
    /// Why, without naming the setting: for a line that names it as it was given.
    public var reason: String { "the entry '\(entry)' is not an IP address or a CIDR block such as 127.0.0.1, 10.0.0.0/8 or ::1" }
    public var description: String { "invalid trusted_proxies: \(reason)" }
}
