import ArgumentParser
import ContentStore
import Crypto
import Delivery
import Foundation
import PushServices
import Storage

struct VapidCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vapid", abstract: "Web Push VAPID keys.", subcommands: [VapidGenerateCommand.self, VapidPublicKeyCommand.self])
}

struct VapidGenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate", abstract: "Make a new VAPID key pair.",
        discussion: """
            Prints the private key (PEM) and the public key in the URL-safe base64 form a browser's \
            applicationServerKey takes. With --key-file the private key goes into that file (mode 0600, never over an \
            existing file) and only the public key is printed. Subscriptions are bound to the key: changing it means \
            every browser subscribes again.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(
        name: .customLong("key-file"), parsing: .unconditional,
        help: ArgumentHelp("Write the private key here instead of printing it.", valueName: "path"))
    var keyFile: String?

    func run() throws {
        let pair = VAPIDKey.generate()
        if let keyFile {
            let descriptor = open(keyFile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw CLIError("cannot create '\(keyFile)': \(String(cString: strerror(errno)))") }
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            do {
                try handle.write(contentsOf: Data((pair.privateKeyPEM + "\n").utf8))
                try handle.synchronize()
            } catch {
                unlink(keyFile)
                throw CLIError("cannot write '\(keyFile)': \(error.localizedDescription)")
            }
        }
        if global.json {
            var object = ["public_key": pair.publicKey]
            if keyFile == nil { object["private_key_pem"] = pair.privateKeyPEM } else { object["key_file"] = keyFile }
            return try printJSON(object)
        }
        if keyFile == nil { print(pair.privateKeyPEM) }
        print("public key (applicationServerKey): \(pair.publicKey)")
    }
}

struct VapidPublicKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "public-key", abstract: "Print the configured VAPID key's public key.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var push: PushOptions

    func run() throws {
        guard let key = try push.vapidPublicKey(global) else { throw CLIError("vapid_key_file is not set") }
        if global.json { return try printJSON(["public_key": key]) }
        print(key)
    }
}
