// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "DailyVerse",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "dailyverse", targets: ["dailyverse"]),
        .executable(name: "dailyverse-bench", targets: ["dailyverse-bench"]),
        .library(name: "Astronomy", targets: ["Astronomy"]),
        .library(name: "HijriCalendar", targets: ["HijriCalendar"]),
        .library(name: "VerseCalendar", targets: ["VerseCalendar"]),
        .library(name: "Storage", targets: ["Storage"]),
        .library(name: "ContentStore", targets: ["ContentStore"]),
        .library(name: "VerseOfTheDay", targets: ["VerseOfTheDay"]),
        .library(name: "Notifications", targets: ["Notifications"]),
        .library(name: "Onboarding", targets: ["Onboarding"]),
        .library(name: "PushServices", targets: ["PushServices"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // The PostgreSQL store (a `postgresql://` database): the wire protocol, a pool, TLS through swift-nio-ssl.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // Already in the graph through Hummingbird; named for NIOCore's IOError (a listen failure's errno) and NIOHTTP1's parser errors.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Also in the graph through Hummingbird: the HTTP parts a channel handler sees (NIOHTTPTypes).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // The push senders' HTTP client (HTTP/2 over TLS with ALPN), and its TLS settings (a CA file beside the system's).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Tests and the benchmark only: the stand-ins' certificates, made when they start.
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Tests only: reading openapi.yaml for the contract test.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // The one protocol of the errors a person can act on (a bad flag, file, setting or request): the CLI prints them as
        // they are, the API answers them with a 4xx and a code.
        .target(name: "Diagnostics"),
        // Pure: bytes written as text (hex, Base64URL), the size of Web Push's one encrypted record, which the payloads
        // must fit, and the hosts a Web Push endpoint may be on, which registering a device and sending to it both
        // check: what several layers share without depending on the push services' code.
        .target(name: "Encodings"),
        // Pure: the Sun and the Moon (VSOP87, ELP 2000-82 as Meeus truncates it), their settings, new moons and the
        // crescent's visibility (Odeh's criterion). Checked against JPL's DE421 in its tests.
        .target(name: "Astronomy"),
        // Pure: a crescent visibility map drawn as SVG and PNG (the zones on a grid, coastlines, the region's sites).
        .target(name: "CrescentMap", dependencies: ["Astronomy"]),
        // Pure: Gregorian <-> Hijri (Umm al-Qura table, tabular arithmetic, sighted overrides, the calendar predicted from
        // the crescent's visibility, adjustments).
        .target(name: "HijriCalendar", dependencies: ["Diagnostics", "Astronomy"]),
        // Pure: month themes, occasions and the deterministic selection rule.
        .target(name: "VerseCalendar", dependencies: ["Diagnostics", "HijriCalendar"]),
        // The database, whatever its tables: where it is (a SQLite file or a `postgresql://` address), the connection (a
        // pool or a queue; postgres-nio's pool), the migrators run on opening, the log checkpointed on a thread of its
        // own, and SQLite's C API for the hot loops (DirectStatement).
        .target(
            name: "Storage",
            dependencies: [
                "Diagnostics", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // The content in SQLite: its tables' migrations, seeding from data/, the importers, the queries, content check.
        .target(
            name: "ContentStore",
            dependencies: [
                "Diagnostics", "Storage", "Astronomy", "HijriCalendar", "VerseCalendar", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // Each user's onboarding progress, the events and their funnel, contextual hints, and signing a guest into an
        // account: their tables' migrations and queries.
        .target(
            name: "Engagement",
            dependencies: [
                "Storage", "Accounts", "Delivery", "Onboarding", "HijriCalendar", "Notifications", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]),
        // The one list of every domain's migrations, in order, and opening the DailyVerse database with it.
        .target(
            name: "AppSchema",
            dependencies: ["Storage", "ContentStore", "Delivery", "Accounts", "Engagement", .product(name: "GRDB", package: "GRDB.swift")]),
        // Pure: devices, when they fire (DST rules, grace), and the APNs, FCM and Web Push payloads.
        .target(name: "Notifications", dependencies: ["Diagnostics", "Encodings", "HijriCalendar", "VerseCalendar"]),
        // Password hashing (scrypt or PBKDF2), bearer tokens stored as hashes; users, sessions, settings and bookmarks:
        // their tables' migrations and queries.
        .target(
            name: "Accounts",
            dependencies: [
                "Diagnostics",
                "Storage", "Encodings", "HijriCalendar", "Notifications", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"), .product(name: "PostgresNIO", package: "postgres-nio"),
            ]),
        // The app's HTTP API (Hummingbird 2): the router, built in one function so tests build the same one.
        .target(
            name: "HTTPAPI",
            dependencies: [
                "Diagnostics", "Storage", "ContentStore", "VerseOfTheDay", "VerseCalendar", "HijriCalendar", "Accounts", "Onboarding", "Engagement",
                "Astronomy", "CrescentMap", "Encodings", .product(name: "HTTPTypes", package: "swift-http-types"),
                "Notifications", "Delivery", .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HummingbirdCore", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
            ]),
        // Pure: the story onboarding's flow (from data/) and its state machine.
        .target(name: "Onboarding", dependencies: ["Diagnostics"]),
        // What talking to APNs, FCM and Web Push needs and can be tested without a socket: provider tokens (ES256,
        // RS256), RFC 8291 encryption, VAPID, and the tables mapping each service's answers to outcomes.
        .target(
            name: "PushServices",
            dependencies: [
                "Diagnostics", "Encodings",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // Tests and the benchmark only: local stand-ins for APNs, FCM and a Web Push service (HTTP/2 over TLS).
        .target(
            name: "PushStandIns",
            dependencies: [
                "PushServices", "Encodings", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"), .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"), .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]),
        // Devices and the outbox in SQLite, the emission pass (exactly once) and the sinks that deliver it.
        .target(
            name: "Delivery",
            dependencies: [
                "Diagnostics",
                "Storage", "Notifications", "VerseOfTheDay", "VerseCalendar", "HijriCalendar", "PushServices", "Encodings",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "Metrics", package: "swift-metrics"),
            ]),
        // The long-running service: scheduler and watchdog in a ServiceGroup, configuration, systemd notify, logs.
        .target(
            name: "Daemon",
            dependencies: [
                "Diagnostics",
                "Storage", "Delivery", "Accounts", "Engagement", "Notifications", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"), .product(name: "Metrics", package: "swift-metrics"),
            ]),
        // Composes calendar, selection and store into the reports the CLI and the API print.
        .target(name: "VerseOfTheDay", dependencies: ["Astronomy", "HijriCalendar", "VerseCalendar", "Storage", "ContentStore"]),
        // The command tree; the executable only calls into it.
        .target(
            name: "DailyVerseCLI",
            dependencies: [
                "Diagnostics",
                "Accounts", "Astronomy", "CrescentMap", "HijriCalendar", "VerseCalendar", "Storage", "AppSchema", "ContentStore", "VerseOfTheDay",
                "Notifications",
                "Delivery", "Daemon", "PushServices", "Encodings",
                "HTTPAPI", "Onboarding", "Engagement", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Metrics", package: "swift-metrics"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                // Output.swift names SQLite's errors (DatabaseError) in its one-line messages.
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .executableTarget(name: "dailyverse", dependencies: ["DailyVerseCLI"]),
        .executableTarget(
            name: "dailyverse-bench",
            dependencies: [
                "Astronomy", "HijriCalendar", "Storage", "AppSchema", "ContentStore", "Delivery", "Notifications", "HTTPAPI", "Accounts",
                "Onboarding", "Engagement", "VerseOfTheDay", "PushServices", "PushStandIns", "Encodings",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The fixtures (gzipped JSON Lines from JPL's DE421 through Skyfield, and PyEphem) are read from the source tree.
        .testTarget(name: "AstronomyTests", dependencies: ["Astronomy"], exclude: ["Fixtures"]),
        .testTarget(name: "HijriCalendarTests", dependencies: ["HijriCalendar", "Astronomy"]),
        // Reads data/map's coastlines from the source tree; decodes the PNG with Python's zlib.
        .testTarget(name: "CrescentMapTests", dependencies: ["CrescentMap", "Astronomy"]),
        .testTarget(name: "VerseCalendarTests", dependencies: ["VerseCalendar", "HijriCalendar"]),
        .testTarget(
            name: "StorageTests",
            dependencies: [
                "Storage", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The PostgreSQL store on a real server (DAILYVERSE_TEST_POSTGRES; skipped in one line without it).
        .testTarget(
            name: "PostgresStoreTests",
            dependencies: [
                "DailyVerseTestSupport", "Storage", "AppSchema", "Delivery", "Notifications", "HijriCalendar", "Accounts", "Engagement",
                "PushServices", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]),
        .testTarget(
            name: "ContentStoreTests",
            dependencies: [
                "DailyVerseTestSupport", "ContentStore", "Storage", "AppSchema", "VerseOfTheDay", "HijriCalendar", "VerseCalendar",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            // Fixtures/: a few sura files of ThaqalaynTafsirData, verbatim (CC BY-ND 4.0; see their NOTICE.md).
            exclude: ["Fixtures"]),
        // The golden files are read from the source tree (by #filePath), not bundled.
        .testTarget(
            name: "NotificationsTests", dependencies: ["Notifications", "HijriCalendar", "Encodings", "PushServices"], exclude: ["Golden"]),
        .testTarget(
            name: "DeliveryTests",
            dependencies: [
                "DailyVerseTestSupport",
                "Delivery", "Notifications", "Storage", "AppSchema", "ContentStore", "HijriCalendar", "PushServices", "PushStandIns", "VerseCalendar",
                "Encodings",
                "VerseOfTheDay", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]),
        .testTarget(
            name: "DaemonTests",
            dependencies: [
                "DailyVerseTestSupport", "Daemon", "Diagnostics", "Delivery", "Storage", "AppSchema", "ContentStore", "Notifications",
                .product(name: "Logging", package: "swift-log"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .testTarget(name: "OnboardingTests", dependencies: ["Onboarding"]),
        .testTarget(name: "EncodingsTests", dependencies: ["Encodings"]),
        .testTarget(
            name: "PushServicesTests",
            dependencies: [
                "DailyVerseTestSupport",
                "PushServices", "PushStandIns", "Encodings", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"), .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .testTarget(
            name: "AccountsTests",
            dependencies: [
                "DailyVerseTestSupport", "Accounts", "Storage", "AppSchema", "ContentStore", "HijriCalendar", "Notifications",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(
            name: "HTTPAPITests",
            dependencies: [
                "DailyVerseTestSupport",
                "HTTPAPI", "Storage", "AppSchema", "ContentStore", "VerseOfTheDay", "Accounts", "Onboarding", "Engagement", "Delivery",
                "Notifications", "HijriCalendar", "VerseCalendar", "Encodings", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Yams", package: "Yams"), .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // What several test targets share: the data folder, a seeded database, fixed instants, a latch, JSON requests.
        .target(
            name: "DailyVerseTestSupport",
            dependencies: [
                "AppSchema", "ContentStore", "Storage", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"), .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"), .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Tests/DailyVerseTestSupport"),
        // A database written by an earlier release (a gzipped fixture) opens with this build with nothing lost.
        .testTarget(
            name: "UpgradeTests",
            dependencies: [
                "DailyVerseTestSupport",
                "Storage", "AppSchema", "ContentStore", "Accounts", "Delivery", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "dailyverse", "DailyVerseCLI", "DailyVerseTestSupport", "Encodings", "PushServices", "PushStandIns",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
    ]
)
