import DailyVerseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HTTPAPI

/// `GET /v1/crescent/{date}.svg` and the predicted calendar's evidence over HTTP.
@Suite struct CrescentRoutesTests {
    @Test func theMapOfAnEveningIsServedAndKept() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let tag = try await client.execute(uri: "/v1/crescent/2026-02-17.svg", method: .get) { response -> String? in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/svg+xml; charset=utf-8")
                #expect(response.headers[.cacheControl] == "public, max-age=86400")
                let svg = String(buffer: response.body)
                #expect(svg.hasPrefix("<?xml") && svg.contains("Crescent visibility on the evening of 17 February 2026"))
                #expect(svg.contains("Iran (odeh-b): not seen") && svg.contains(">Tehran</text>") && svg.contains("<polyline"))
                return response.headers[.eTag]
            }
            let etag = try #require(tag)
            // The first and the last day maps are drawn for (the fuzzer found the first refused).
            for edge in ["1900-01-01", "2100-12-31"] {
                try await client.execute(uri: "/v1/crescent/\(edge).svg", method: .get) { #expect($0.status == .ok, "\(edge)") }
            }
            try await client.execute(uri: "/v1/crescent/2026-02-17.svg", method: .get, headers: [.ifNoneMatch: etag]) { response in
                #expect(response.status == .notModified && response.body.readableBytes == 0)
            }
            for (file, code) in [
                ("2026-02-17.png", "bad_date"), ("2026-02-30.svg", "bad_date"), ("2026-2-17.svg", "bad_date"), ("..%2F..%2Fetc.svg", "bad_date"),
                ("1899-12-31.svg", "out_of_range"), ("2101-01-01.svg", "out_of_range"), ("0000-01-01.svg", "bad_date"),
            ] {
                try await client.execute(uri: "/v1/crescent/\(file)", method: .get) { response in
                    #expect(response.status == .badRequest, "\(file)")
                    let error = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                    #expect((error?["error"] as? [String: Any])?["code"] as? String == code, "\(file)")
                }
            }
        }
    }

    /// The calendar's evidence over HTTP: Ramadan 1447 decided on the evening of 18 February 2026.
    @Test func theCalendarCarriesEachMonthsEvidence() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            try await client.execute(uri: "/v1/calendar/1447", method: .get) { response in
                let json = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                #expect(json["calendar"] as? String == "predicted" && json["region"] as? String == "iran")
                let months = try #require(json["months"] as? [[String: Any]])
                let ramadan = try #require(months[8]["evidence"] as? [String: Any])
                #expect(months[8]["start"] as? String == "2026-02-19" && months[8]["basis"] as? String == "predicted")
                #expect(ramadan["evening"] as? String == "2026-02-18" && ramadan["site"] as? String == "Tehran" && ramadan["seen"] as? Bool == true)
                #expect((ramadan["conjunction"] as? String)?.hasPrefix("2026-02-17T12:01") == true, "\(ramadan)")
            }
        }
    }
}
