import Accounts
import ContentStore
import DailyVerseTestSupport
import Delivery
import HijriCalendar
import Hummingbird
import HummingbirdTesting
import Notifications
import Onboarding
import Testing
import VerseCalendar

@testable import HTTPAPI

/// The API's one table of domain errors (`APIError.init?(_:in:)`): each error a request can cause has its status and
/// code and keeps its own message, and an error no request causes is left for the bare 500.
@Suite struct DomainErrorTableTests: JSONRequests {
    func answer(_ error: any Error, _ part: RequestPart = .body) -> (Int, String, String)? {
        APIError(error, in: part).map { ($0.status.code, $0.code, $0.message) }
    }

    @Test func everyDeviceErrorHasItsCode() {
        let cases: [(DeviceError, Int, String)] = [
            (.notFound("d1"), 404, "device_not_found"), (.duplicateToken("t"), 409, "token_taken"),
            (.invalidToken(platform: .apns, value: "x"), 400, "bad_token"),
            (.pushServiceNotAllowed(host: "localhost"), 400, "push_service_not_allowed"),
            (.invalidTime("25:00"), 400, "bad_time"), (.invalidTimeZone("Mars/Olympus"), 400, "bad_zone"),
            (.invalidPlatform("palm"), 400, "bad_platform"), (.invalidLocale("fr"), 400, "bad_locale"),
            (.invalidDisplayTheme("neon"), 400, "bad_theme"), (.missing("token"), 400, "missing_field"), (.tooMany(20), 409, "too_many_devices"),
        ]
        for (error, status, code) in cases {
            let mapped = answer(error)
            #expect(mapped?.0 == status && mapped?.1 == code, "\(error)")
        }
        // The message is the error's own, naming the value; a missing device says which.
        #expect(answer(DeviceError.invalidTime("25:00"))?.2 == DeviceError.invalidTime("25:00").description)
        #expect(answer(DeviceError.notFound("d1"))?.2 == "no device 'd1'")
    }

    @Test func aCalendarErrorIsAnsweredByWhereItArose() {
        let adjustment = CalendarError.invalidAdjustment(7)
        #expect(answer(adjustment, .url)?.1 == "bad_calendar")
        #expect(answer(adjustment, .body)?.1 == "bad_adjustment")
        #expect(answer(adjustment, .answer)?.1 == "out_of_range")
        let date = CalendarError.invalidGregorianDate("2025-02-30")
        #expect(answer(date, .url)?.1 == "bad_date")
        #expect(answer(CalendarError.invalidHijriDate("1446-13-01"), .url)?.1 == "bad_date")
        #expect(answer(CalendarError.unknownCalendar("lunar"), .url)?.1 == "bad_calendar")
        #expect(answer(CalendarError.unknownCalendar("lunar"), .body)?.1 == "bad_calendar")
        let range = CalendarError.outOfRange(date: "9999-01-01", calendar: .ummAlQura, supported: "1356-1500 AH")
        #expect(answer(range, .answer).map { "\($0.0) \($0.1) \($0.2)" } == "400 out_of_range \(range.description)")
    }

    @Test func theOtherDomainsErrors() {
        #expect(answer(StoreError.verseNotFound("2:300"), .answer).map { "\($0.0) \($0.1)" } == "404 verse_not_found")
        #expect(answer(StoreError.unknownTranslation("xx"), .answer).map { "\($0.0) \($0.1)" } == "404 translation_not_found")
        #expect(answer(SelectionError.invalidVerseKey("nonsense"), .url).map { "\($0.0) \($0.1)" } == "400 bad_verse")
        #expect(answer(AccountError.invalidEmail("a@b"))?.1 == "bad_email")
        #expect(answer(AccountError.weakPassword("8 characters at least"))?.1 == "weak_password")
        #expect(answer(DeviceInputError("bad platform and token"))?.1 == "bad_device")
        // A sign-in's refusals; `notAGuest` is the second of two upgrades of one guest sent at once.
        #expect(answer(SignInError.invalidCredentials).map { "\($0.0) \($0.1)" } == "401 invalid_credentials")
        #expect(answer(SignInError.emailTaken).map { "\($0.0) \($0.1)" } == "409 email_taken")
        #expect(answer(SignInError.notAGuest).map { "\($0.0) \($0.1)" } == "409 already_an_account")
        let refusal = OnboardingError.invalidTransition("the onboarding is complete")
        #expect(answer(refusal, .answer).map { "\($0.0) \($0.1)" } == "409 \(refusal.code)")
        // The installation's own faults, whose messages name its files, are not a client's answer (500, logged).
        #expect(answer(OnboardingError.unreadableFile("missing data file '/srv/data/onboarding/flow.json'"), .answer) == nil)
        #expect(answer(OnboardingError.invalidFlow("no screens"), .answer) == nil)
        #expect(answer(BookmarkError.tooMany(maximumBookmarks)).map { "\($0.0) \($0.1)" } == "409 too_many_bookmarks")
        #expect(answer(BookmarkError.tooManyToMerge(own: 1, guest: 2, maximum: 3)).map { "\($0.0) \($0.1)" } == "409 too_many_bookmarks")
    }

    /// A domain error that reaches the edge unanswered (a route that did not wrap its store call in `answering`) is
    /// answered by the table, not as a 500.
    @Test func aDomainErrorNoRouteAnsweredIsStillAnsweredByTheTable() async throws {
        let router = Router()
        router.add(middleware: ErrorMiddleware())
        router.put("/bookmark") { _, _ -> Response in throw BookmarkError.tooMany(maximumBookmarks) }
        router.put("/device") { _, _ -> Response in throw DeviceError.invalidTime("25:00") }
        router.put("/broken") { _, _ -> Response in throw StoreError.notSeeded("verses") }
        try await Application(router: router).test(.router) { client in
            for (path, status, code) in [("/bookmark", 409, "too_many_bookmarks"), ("/device", 400, "bad_time"), ("/broken", 500, "internal")] {
                let (answered, reply) = try await send(client, .put, path, token: "any")
                #expect(answered == status, "\(path)")
                #expect((reply["error"] as? [String: Any])?["code"] as? String == code, "\(path)")
            }
        }
    }

    @Test func anErrorNoRequestCausesIsNotDescribed() {
        // A broken data file or database is the server's fault: ErrorMiddleware answers a bare 500.
        for error: any Error in [
            StoreError.missingDataFile("verses.json"), StoreError.notSeeded("verses"), StoreError.cannotOpen(path: "db", reason: "full"),
            SelectionError.invalidCalendarData("month 13"), CancellationError(),
            // The installation's regions and predicted tables are its configuration and data, not the request's.
            CalendarError.malformedRegions("line 2"), CalendarError.predictedUnavailable("iran"),
            CalendarError.unknownRegion("mars", known: ["iran"]), CalendarError.badCoordinates("95,10", "out of range"),
        ] {
            #expect(answer(error, .answer) == nil, "\(error)")
        }
    }
}
