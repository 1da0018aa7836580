import Foundation
import Logging
import Storage
import Testing

/// Reading a `postgresql://` address as libpq does, refusing what we cannot honour in one line naming the bad part,
/// and finding the password where an operator keeps it, never in the address.
struct PostgresAddressTests {
    @Test func aFullAddressAndItsDefaults() throws {
        let full = try PostgresAddress(
            "postgresql://dv%40app@db.example.org:6432/daily%20verse?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem&application_name=dv-1&connect_timeout=3",
            environment: [:])
        #expect(full.user == "dv@app" && full.host == "db.example.org" && full.port == 6432 && full.database == "daily verse")
        #expect(full.tlsMode == .verifyFull && full.caFile == "/etc/ssl/db-ca.pem" && full.applicationName == "dv-1" && full.connectTimeout == 3)
        let plain = try PostgresAddress("postgres://dailyverse@localhost/dailyverse", environment: [:])
        #expect(plain.port == 5432 && plain.tlsMode == .prefer && plain.applicationName == "dailyverse" && plain.connectTimeout == 10)
        // libpq's environment fills what the address leaves out; the address wins.
        let fromEnvironment = try PostgresAddress("postgresql://u@h/d", environment: ["PGSSLMODE": "require", "PGCONNECT_TIMEOUT": "5"])
        #expect(fromEnvironment.tlsMode == .require && fromEnvironment.connectTimeout == 5)
        #expect(try PostgresAddress("postgresql://u@h/d?sslmode=disable", environment: ["PGSSLMODE": "require"]).tlsMode == .disable)
        // As libpq: require with a root certificate checks the chain.
        #expect(try PostgresAddress("postgresql://u@h/d?sslmode=require&sslrootcert=/ca.pem", environment: [:]).tlsMode == .verifyCA)
        #expect(try PostgresAddress("postgresql://u@h/d?sslmode=allow", environment: [:]).tlsMode == .prefer)
        let socket = try PostgresAddress("postgresql://postgres@/dailyverse?host=/var/run/postgresql", environment: [:])
        #expect(socket.host == nil && socket.socketFolder == "/var/run/postgresql")
        #expect(try PostgresAddress("postgresql://u@[::1]:5433/d", environment: [:]).host == "::1")
        // TCP keep-alive: on, giving up a silent connection within a minute, unless the address says otherwise; none
        // over a Unix socket, as libpq.
        #expect(plain.keepAlive == .standard && socket.keepAlive == nil)
        let keepAlive = try PostgresAddress(
            "postgresql://u@h/d?keepalives_idle=5&keepalives_interval=2&keepalives_count=9&tcp_user_timeout=0", environment: [:]
        ).keepAlive
        #expect(keepAlive == TCPKeepAlive(isOn: true, idle: 5, interval: 2, count: 9, userTimeout: 0))
        #expect(TCPKeepAlive.standard == TCPKeepAlive(isOn: true, idle: 30, interval: 10, count: 3, userTimeout: 60_000))
        // As libpq: any number but 0 is on, and 0 leaves a figure to the system.
        func parsed(_ parameters: String) throws -> TCPKeepAlive? {
            try PostgresAddress("postgresql://u@h/d?" + parameters, environment: [:]).keepAlive
        }
        #expect(try parsed("keepalives=2")?.isOn == true)
        #expect(try parsed("keepalives_idle=0")?.idle == 0)
        // Unless given, the user timeout is the probes' time (Linux gives up at it, whatever the count), and none
        // without probes.
        #expect(try parsed("keepalives_count=9")?.userTimeout == 120_000)
        #expect(try parsed("keepalives_idle=0&keepalives_interval=0&keepalives_count=0")?.userTimeout == (7_200 + 75 * 9) * 1000)
        #expect(try parsed("keepalives=0") == TCPKeepAlive(isOn: false, idle: 30, interval: 10, count: 3, userTimeout: 0))
    }

    @Test func itsDescriptionReadsBackAsTheSameAddress() throws {
        for text in [
            "postgresql://dv%40app@db.example.org:6432/daily%20verse?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem",
            "postgresql://u@[::1]:5433/d", "postgresql://postgres@/dailyverse?host=/var/run/postgresql",
            "postgresql://u@h/d?keepalives=0&tcp_user_timeout=500", "postgresql://u@h/d?keepalives_idle=5&keepalives_count=9",
            "postgresql://u@h/d?keepalives=0", "postgresql://u@h/d?keepalives_count=9&tcp_user_timeout=60000",
        ] {
            let address = try PostgresAddress(text, environment: [:])
            var again = try PostgresAddress(address.description, environment: [:])
            again.applicationName = address.applicationName
            again.connectTimeout = address.connectTimeout
            #expect(again == address, "\(address)")
        }
    }

    /// The chain ends where libpq ends it: `sslrootcert`, else ~/.postgresql/root.crt if there is one (which makes
    /// `require` check the chain, as libpq does), else nothing; the system's roots only as `sslrootcert=system`, which
    /// means `verify-full`.
    @Test func theRootCertificateIsFoundAsLibpqFindsIt() throws {
        let system = try PostgresAddress("postgresql://u@h/d?sslrootcert=system", environment: [:])
        #expect(system.tlsMode == .verifyFull && system.systemRoots && system.caFile == nil)
        #expect(system.description.hasSuffix("?sslmode=verify-full&sslrootcert=system"))
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("dv-home-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home.appendingPathComponent(".postgresql"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        #expect(throws: StorageError.self) { try PostgresAddress("postgresql://u@h/d?sslmode=verify-full", environment: ["HOME": home.path]) }
        FileManager.default.createFile(atPath: home.appendingPathComponent(".postgresql/root.crt").path, contents: Data("x".utf8))
        let found = try PostgresAddress("postgresql://u@h/d?sslmode=verify-full", environment: ["HOME": home.path])
        #expect(found.caFile == home.appendingPathComponent(".postgresql/root.crt").path && found.tlsMode == .verifyFull)
        #expect(try PostgresAddress("postgresql://u@h/d?sslmode=require", environment: ["HOME": home.path]).tlsMode == .verifyCA)
        #expect(try PostgresAddress("postgresql://u@h/d", environment: ["HOME": home.path]).tlsMode == .prefer)
        // A Unix socket has no TLS: the root file and `system` are not its, as libpq ignores them there.
        for environment in [["HOME": home.path, "PGSSLMODE": "require"], ["PGSSLROOTCERT": "system"]] {
            let socket = try PostgresAddress("postgresql://u@/d?host=/run/postgresql", environment: environment)
            #expect(socket.caFile == nil && !socket.systemRoots && socket.tlsMode != .verifyCA && socket.tlsMode != .verifyFull, "\(environment)")
        }
    }

    /// A password would go to whoever stands between only over a network to a server whose certificate is not
    /// checked: `serve` says so at start.
    @Test func aPasswordIsExposedOnlyToAServerNotChecked() throws {
        let exposed = [
            "postgresql://u@db.example.org/d", "postgresql://u@db.example.org/d?sslmode=require", "postgresql://u@10.0.0.5/d?sslmode=disable",
        ]
        let safe = [
            "postgresql://u@db.example.org/d?sslmode=verify-full&sslrootcert=/etc/ssl/ca.pem", "postgresql://u@db.example.org/d?sslrootcert=system",
            "postgresql://u@db.example.org/d?sslmode=require&sslrootcert=/etc/ssl/ca.pem", "postgresql://u@localhost/d", "postgresql://u@127.0.0.1/d",
            "postgresql://u@[::1]/d", "postgresql://u@/d?host=/run/postgresql",
        ]
        for text in exposed { #expect(try PostgresAddress(text, environment: [:]).exposesPassword, "\(text)") }
        for text in safe { #expect(try !PostgresAddress(text, environment: [:]).exposesPassword, "\(text)") }
    }

    /// Each refusal is one line that names the address (its password hidden) and the bad part.
    @Test(arguments: [
        ("postgresql://u:s3cret@h/d", "carries a password"),
        ("postgresql://h/d", "names no user"),
        ("postgresql://u@h", "names no database"),
        ("postgresql://u@h/d/e", "names no database"),
        ("postgresql://u@/d", "names no host"),
        ("postgresql://u@h:70000/d", "port 70000"),
        ("postgresql://u@h/d?sslmode=verify", "sslmode='verify'"),
        ("postgresql://u@h/d?ssl=true", "unknown parameter 'ssl'"),
        ("postgresql://u@h/d?sslmode=disable&sslmode=require", "given twice"),
        ("postgresql://u@h/d?sslrootcert=ca.pem&sslmode=verify-full", "sslrootcert='ca.pem'"),
        ("postgresql://u@h/d?connect_timeout=0", "connect_timeout='0'"),
        ("postgresql://u@h/d?connect_timeout=ten", "connect_timeout='ten'"),
        ("postgresql://u@h/d?keepalives=yes", "keepalives='yes'"),
        ("postgresql://u@h/d?keepalives_idle=32768", "keepalives_idle='32768'"),
        ("postgresql://u@h/d?keepalives_interval=-1", "keepalives_interval='-1'"),
        ("postgresql://u@h/d?keepalives_count=128", "keepalives_count='128'"),
        ("postgresql://u@h/d?tcp_user_timeout=1.5", "tcp_user_timeout='1.5'"),
        ("postgresql://u@h/d?tcp_user_timeout=2147483648", "tcp_user_timeout='2147483648'"),
        ("postgresql://u@h1,h2/d", "several hosts"),
        ("postgresql://u@/d?host=run/pg", "host='run/pg'"),
        ("postgresql://u@/d?host=/run/pg&sslmode=verify-full", "over a Unix socket"),
        ("postgresql://u@h/d?passfile=pgpass", "passfile='pgpass'"),
        // A verifying mode with nothing to verify against (libpq refuses it; the system's roots were trusted).
        ("postgresql://u@h/d?sslmode=verify-full", "needs the server's root certificate"),
        ("postgresql://u@h/d?sslmode=verify-ca", "needs the server's root certificate"),
        ("postgresql://u@h/d?sslrootcert=system&sslmode=verify-ca", "sslrootcert=system needs sslmode=verify-full"),
        ("postgresql://u@h/d?sslrootcert=system&sslmode=require", "sslrootcert=system needs sslmode=verify-full"),
    ])
    func badAddressesAreRefusedNamingTheBadPart(text: String, expected: String) {
        let error = #expect(throws: StorageError.self) { try PostgresAddress(text, environment: [:]) }
        let line = error.map { "\($0)" } ?? ""
        #expect(line.hasPrefix("bad database address 'postgresql://") && line.contains(expected) && !line.contains("\n"), "\(line)")
        #expect(!line.contains("s3cret"), "\(line)")
    }

    /// A password is refused wherever it is written (the user part, a parameter; holding `/`, `?`, `#`, `@`, `:` or
    /// `&`, as passwords do), and the line that refuses it shows none of it: not in the address, not in the reason
    /// (a parameter's name or a fragment a password's `?` or `#` would make). Nor does an address of another scheme,
    /// which is refused rather than taken for a SQLite file's name.
    @Test(arguments: ["s3cret", "s3/cret", "s3?cret", "s3#cret", "s3@cret", "s3:cret", "s3&cret", "s3%2Fcret"])
    func aPasswordIsShownNowhere(secret: String) {
        for text in [
            "postgresql://u:\(secret)@h/d", "postgres://u:\(secret)@h:5432/d?sslmode=bogus", "postgresql://u@h/d?password=\(secret)",
            "postgresql://u@h/d?sslmode=require&password=\(secret)&x=1", "postgresql://u:\(secret)@h/d?application_name=a@b",
            "postgresql://u:\(secret)@/d?host=/run/pg", "postgresq://u:\(secret)@h/d", "mysql://u:\(secret)@h/d?password=\(secret)",
            // A slash short: an address mistyped, not a SQLite file of that name (whose path an error would print whole).
            "postgresql:/u:\(secret)@h/d", "postgres:u:\(secret)@h/d", "PostgreSQL:/u:\(secret)@h/d",
        ] {
            let error = #expect(throws: StorageError.self, "\(text)") { try DatabaseLocation(text) }
            let line = error.map { "\($0)" } ?? ""
            #expect(line.hasPrefix("bad database address '") && !line.contains("\n"), "\(line)")
            #expect(!line.contains("cret") && !line.contains("s3"), "\(line)")
        }
        #expect(PostgresAddress.redacted("postgresql://u@h:5432/d?sslmode=require") == "postgresql://u@h:5432/d?sslmode=require")
        // Two slashes written, in capitals: not told it lacks them.
        let shouted = #expect(throws: StorageError.self) { try DatabaseLocation("POSTGRESQL://u@h/d") }
        #expect(shouted.map { "\($0)" }?.contains("two slashes") == false)
    }

    @Test func aPathIsSQLiteAndAnAddressIsPostgreSQL() throws {
        #expect(try DatabaseLocation("/var/lib/dailyverse/dailyverse.sqlite") == .sqlite(path: "/var/lib/dailyverse/dailyverse.sqlite"))
        #expect(try DatabaseLocation("postgres.sqlite") == .sqlite(path: "postgres.sqlite"))
        guard case .postgres(let address) = try DatabaseLocation("postgresql://dailyverse@db/dailyverse") else {
            Issue.record("not read as PostgreSQL")
            return
        }
        #expect(address.host == "db")
        #expect(throws: StorageError.self) { try DatabaseLocation("postgresql://db/dailyverse") }
    }

    /// The credential first (a systemd unit's `LoadCredential=`), then PGPASSWORD, then the passfile, as libpq reads it.
    @Test func thePasswordComesFromTheCredentialThenPGPASSWORDThenThePassfile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-pg-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let address = try PostgresAddress("postgresql://dv@db.example.org:6432/daily?passfile=\(folder)/pgpass", environment: [:])
        let passfile = """
            # comments and other servers first
            other.example.org:6432:daily:dv:not-this
            db.example.org:*:daily:dv:pa\\:ss\\\\word
            *:*:*:*:fallback

            """
        _ = FileManager.default.createFile(atPath: folder + "/pgpass", contents: Data(passfile.utf8), attributes: [.posixPermissions: 0o600])
        #expect(try PostgresPassword.resolve(for: address, environment: ["HOME": folder]) == "pa:ss\\word")
        #expect(try PostgresPassword.resolve(for: address, environment: ["HOME": folder, "PGPASSWORD": "from-environment"]) == "from-environment")
        _ = FileManager.default.createFile(atPath: folder + "/" + PostgresPassword.credentialName, contents: Data("from-credential\n".utf8))
        #expect(
            try PostgresPassword.resolve(for: address, environment: ["CREDENTIALS_DIRECTORY": folder, "PGPASSWORD": "from-environment"])
                == "from-credential")
        // A passfile others can read is refused, as libpq ignores it, naming the file and its mode.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder + "/pgpass")
        let loose = #expect(throws: StorageError.self) { try PostgresPassword.resolve(for: address, environment: [:]) }
        #expect(loose.map { "\($0)" }?.contains("\(folder)/pgpass") == true && loose.map { "\($0)" }?.contains("mode 644") == true)
        // A passfile named but missing is an error; no passfile at all is no password.
        try FileManager.default.removeItem(atPath: folder + "/pgpass")
        #expect(throws: StorageError.self) { try PostgresPassword.resolve(for: address, environment: [:]) }
        let unnamed = try PostgresAddress("postgresql://dv@db.example.org/daily", environment: [:])
        #expect(try PostgresPassword.resolve(for: unnamed, environment: ["HOME": folder]) == nil)
    }

    /// A server that is not there, or a CA file that is not, is one line naming the address and the cause, at once.
    @Test func anUnreachableServerOrAMissingCAFileIsOneLine() async throws {
        let closed = try PostgresAddress("postgresql://dv@127.0.0.1:1/daily?sslmode=disable&connect_timeout=5", environment: [:])
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let error = await #expect(throws: StorageError.self) {
            try await PostgresStore.open(closed, password: "secret-password", schema: Schema([]), logger: logger)
        }
        let line = error.map { "\($0)" } ?? ""
        #expect(line.hasPrefix("database 'postgresql://dv@127.0.0.1:1/daily") && line.contains("cannot connect"), "\(line)")
        #expect(!line.contains("secret-password") && !line.contains("\n"))
        let noCA = try PostgresAddress("postgresql://dv@127.0.0.1:1/daily?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem", environment: [:])
        let caError = await #expect(throws: StorageError.self) {
            try await PostgresStore.open(noCA, password: nil, schema: Schema([]), logger: logger)
        }
        #expect(caError.map { "\($0)" }?.contains("sslrootcert '/nonexistent/ca.pem'") == true, "\(String(describing: caError))")
    }
}
