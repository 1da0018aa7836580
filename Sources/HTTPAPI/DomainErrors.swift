import Accounts
import ContentStore
import Delivery
import HijriCalendar
import Notifications
import Onboarding
import VerseCalendar

/// Where in a request a domain error arose. Only the calendar's errors are answered differently by place (see
/// `APIError.calendarCode`); for every other error the place changes nothing.
enum RequestPart: Sendable {
    /// The path and the query string: a verse key, `date`, `calendar`, `adjust`.
    case url
    /// A JSON body's fields: a device's, the settings', an account's, an onboarding event.
    case body
    /// Working out the answer to a request that was well formed: today's verse, a verse, a year, the themes; a hint's
    /// or the onboarding's state.
    case answer
}

extension APIError {
    /// The API's one table of domain errors: each `UserFacingError` a request can cause, with its status and code and
    /// the error's own message. `nil` for an error no request causes (a data file that cannot be read, a database
    /// that cannot be opened): that one is not described to the client, and ErrorMiddleware answers 500.
    init?(_ error: any Error, in part: RequestPart) {
        switch error {
        case let error as StoreError:
            switch error {
            case .verseNotFound: self = .notFound("verse_not_found", error.description)
            case .unknownTranslation: self = .notFound("translation_not_found", error.description)
            case .unknownLayer: self = .notFound("layer_not_found", error.description)
            case .unknownOccasion: self = .notFound("occasion_not_found", error.description)
            case .cannotOpen, .dataDirectoryNotFound, .notADataDirectory, .missingDataFile, .unreadableFile, .malformedLine, .malformedData,
                .notSeeded,
                .invalidLayerSources, .editionOfAnotherKind:
                return nil
            }
        case let error as CalendarError:
            switch error {
            // The installation's regions and predicted tables: its configuration and data, which no request names.
            case .malformedRegions, .predictedUnavailable, .unknownRegion, .badCoordinates: return nil
            default: self = .badRequest(Self.calendarCode(error, in: part), error.description)
            }
        case let error as SelectionError:
            guard case .invalidVerseKey = error else { return nil }
            self = .badRequest("bad_verse", error.description)
        case let error as DeviceError:
            switch error {
            case .notFound(let id): self = deviceNotFound(id)
            case .duplicateToken: self = APIError(.conflict, code: "token_taken", error.description)
            case .invalidToken: self = .badRequest("bad_token", error.description)
            case .pushServiceNotAllowed: self = .badRequest("push_service_not_allowed", error.description)
            case .invalidTime: self = .badRequest("bad_time", error.description)
            case .invalidTimeZone: self = .badRequest("bad_zone", error.description)
            case .invalidPlatform: self = .badRequest("bad_platform", error.description)
            case .invalidLocale: self = .badRequest("bad_locale", error.description)
            case .invalidDisplayTheme: self = .badRequest("bad_theme", error.description)
            case .missing: self = .badRequest("missing_field", error.description)
            case .tooMany, .tooManyToMerge: self = APIError(.conflict, code: "too_many_devices", error.description)
            }
        case let error as BookmarkError:
            self = APIError(.conflict, code: "too_many_bookmarks", error.description)
        case let error as DeviceInputError:
            self = .badRequest("bad_device", error.description)
        case let error as SignInError:
            switch error {
            case .invalidCredentials: self = APIError(.unauthorized, code: "invalid_credentials", "the email or the password is wrong")
            case .emailTaken: self = APIError(.conflict, code: "email_taken", "an account with this email exists")
            // Two upgrades of one guest at once: the first made it an account.
            case .notAGuest: self = APIError(.conflict, code: "already_an_account", "this token belongs to an account")
            }
        case let error as AccountError:
            switch error {
            case .invalidEmail: self = .badRequest("bad_email", error.description)
            case .invalidDisplayName: self = .badRequest("bad_display_name", error.description)
            case .weakPassword: self = .badRequest("weak_password", error.description)
            }
        // The onboarding's and the hints' refusals: 409 with the machine's code, nothing changed.
        case let error as OnboardingError:
            // A flow or a file of data/ that cannot be read is the installation's fault, and its message names a path.
            guard case .invalidTransition = error else { return nil }
            self = APIError(.conflict, code: error.code, error.description)
        default:
            return nil
        }
    }

    /// A calendar error's code, the one entry of the table that depends on where the error arose. The API document
    /// names each of these codes per route, so they stay as they were when the routes mapped their own errors: in
    /// the URL a bad adjustment is `bad_calendar` (with `calendar`, it chooses the calendar), in a body it is
    /// `bad_adjustment` (a field of its own); while answering, the request was well formed and the calendar cannot
    /// answer for that date, `out_of_range`.
    static func calendarCode(_ error: CalendarError, in part: RequestPart) -> String {
        switch (part, error) {
        case (.answer, _): "out_of_range"
        case (.url, .invalidGregorianDate), (.url, .invalidHijriDate): "bad_date"
        case (.body, .invalidAdjustment): "bad_adjustment"
        default: "bad_calendar"
        }
    }
}

/// Runs `body`; a domain error it throws is answered by the table, and anything else goes on as it is (an `APIError`
/// thrown inside keeps its own answer; any other error becomes ErrorMiddleware's bare 500).
func answering<T>(_ part: RequestPart, _ body: () throws -> T) throws -> T {
    do { return try body() } catch {
        if let answer = APIError(error, in: part) { throw answer }
        throw error
    }
}

/// `answering` for a store's async operation.
func answering<T>(_ part: RequestPart, _ body: () async throws -> T) async throws -> T {
    do { return try await body() } catch {
        if let answer = APIError(error, in: part) { throw answer }
        throw error
    }
}
