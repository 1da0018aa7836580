import Testing

@testable import HTTPAPI

/// Which address a request is counted under: the peer's, unless the peer is a trusted proxy.
@Suite struct TrustedProxiesTests {
    let proxies = try! TrustedProxies(parsing: "10.0.0.0/8, 127.0.0.1 ::1,2001:db8::/32")

    @Test func forwardingHeadersAreReadOnlyFromTrustedProxiesRightToLeft() {
        // From a client directly: its forged header is ignored.
        #expect(proxies.client(peer: "198.51.100.9", forwarded: nil, forwardedFor: "1.2.3.4") == "198.51.100.9")
        // From a trusted proxy: the rightmost hop that is not itself trusted.
        #expect(proxies.client(peer: "10.1.2.3", forwarded: nil, forwardedFor: "1.2.3.4, 198.51.100.9, 10.9.9.9") == "198.51.100.9")
        #expect(proxies.client(peer: "127.0.0.1", forwarded: nil, forwardedFor: "198.51.100.9") == "198.51.100.9")
        // Every hop trusted: the leftmost.
        #expect(proxies.client(peer: "10.1.2.3", forwarded: nil, forwardedFor: "10.0.0.5, 10.0.0.6") == "10.0.0.5")
        // No header, or a malformed one: the proxy's own address.
        #expect(proxies.client(peer: "10.1.2.3", forwarded: nil, forwardedFor: nil) == "10.1.2.3")
        #expect(proxies.client(peer: "10.1.2.3", forwarded: nil, forwardedFor: "unknown, 1.2.3.4") == "10.1.2.3")
        // Nothing trusted: always the peer.
        #expect(TrustedProxies.none.client(peer: "127.0.0.1", forwarded: nil, forwardedFor: "1.2.3.4") == "127.0.0.1")
        // An IPv4-mapped IPv6 peer is its IPv4 address.
        #expect(proxies.client(peer: "::ffff:10.0.0.1", forwarded: nil, forwardedFor: "198.51.100.9") == "198.51.100.9")
    }

    @Test func forwardedWinsAndItsForms() {
        let header = #"for=192.0.2.60;proto=https;by=203.0.113.43, for="[2001:db8:cafe::17]:4711", For=10.0.0.7:8080"#
        #expect(TrustedProxies.forwardedFor(header) == ["192.0.2.60", "2001:db8:cafe::17", "10.0.0.7"])
        // 2001:db8::/32 is trusted here, so the client is the first hop.
        #expect(proxies.client(peer: "::1", forwarded: header, forwardedFor: "1.1.1.1") == "192.0.2.60")
        #expect(proxies.client(peer: "::1", forwarded: "by=1.2.3.4", forwardedFor: nil) == "::1")
    }

    /// An IPv6 client is counted by its /64: one subscriber picks any address in it, and would otherwise have a
    /// fresh throttle for every request. IPv4 (and IPv4-mapped) addresses are counted as they are.
    @Test func throttlesCountIPv6ByItsSlash64() {
        #expect(AddressRange.throttleKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd") == "2001:db8:1:2::/64")
        #expect(AddressRange.throttleKey("2001:0db8:0001:0002::1") == "2001:db8:1:2::/64")
        #expect(AddressRange.throttleKey("2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(AddressRange.throttleKey("::1") == "0:0:0:0::/64")
        #expect(AddressRange.throttleKey("198.51.100.9") == "198.51.100.9")
        #expect(AddressRange.throttleKey("::ffff:198.51.100.9") == "198.51.100.9")
        #expect(AddressRange.throttleKey("local") == "local")
    }

    @Test func blocksMatchByTheirPrefix() throws {
        let block = try #require(AddressRange("192.168.16.0/20"))
        #expect(block.contains(try #require(AddressRange.bytes("192.168.31.255"))))
        #expect(!block.contains(try #require(AddressRange.bytes("192.168.32.0"))))
        #expect(try #require(AddressRange("0.0.0.0/0")).contains(try #require(AddressRange.bytes("8.8.8.8"))))
        #expect(!block.contains(try #require(AddressRange.bytes("::1"))))
        for bad in ["10.0.0.0/33", "::/129", "example.org", "10.0.0", "1.2.3.4/", "/8", "1.2.3.4/-1", "1.2.3.4/08x"] {
            #expect(AddressRange(bad) == nil, "\(bad)")
            #expect(throws: TrustedProxiesError.self) { try TrustedProxies(parsing: "127.0.0.1, \(bad)") }
        }
    }
}
