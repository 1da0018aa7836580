import Accounts
import Delivery
import Encodings
import Engagement
import Foundation
import HijriCalendar
import Hummingbird
import NIOCore
import Notifications
import Storage

/// The daemon's devices, each owned by the user who registered it. Another user's device is "not found", never
/// "forbidden": ids reveal nothing.
func addDeviceRoutes(_ router: Router<APIContext>, _ environment: APIEnvironment) {
    let users = environment.users
    let hosts = environment.webPushHosts

    router.get("/v1/devices") { _, context -> Response in
        let user = try context.requireIdentity()
        return json(["devices": try await users.devices(userID: user.id, now: environment.clock()).map(DeviceRecord.init)])
    }

    // A token this user registered before (the app registers at every launch) updates that device and returns 200;
    // any other token, another user's included, is a new device for this user (201), with the user's settings for
    // the fields the request leaves out (README, "Device tokens").
    router.post("/v1/devices") { request, context -> Response in
        let user = try context.requireIdentity()
        let object = try await jsonObject(request, context)
        let now = environment.clock()
        let settings = try answering(.body) { try DeviceRecord.settings(from: object, webPushHosts: hosts) }
        let (device, created) = try await answering(.body) {
            try await users.registerDevice(settings, userID: user.id, now: now, maximum: environment.limits.devicesPerUser)
        }
        return json(["device": DeviceRecord(device)], status: created ? .created : .ok)
    }

    router.patch("/v1/devices/:id") { request, context -> Response in
        let user = try context.requireIdentity()
        let id = try context.pathParameter("id")
        let object = try await jsonObject(request, context)
        let body = JSONBody(object)
        let now = environment.clock()
        let device = try await answering(.body) {
            try await users.updateDevice(id: id, userID: user.id, now: now) { platform in
                try DeviceRecord.settings(from: body.object, existing: platform, webPushHosts: hosts)
            }
        }
        return json(["device": DeviceRecord(device)])
    }

    router.delete("/v1/devices/:id") { _, context -> Response in
        let user = try context.requireIdentity()
        let id = try context.pathParameter("id")
        guard try await users.removeDevice(id: id, userID: user.id) else { throw deviceNotFound(id) }
        return Response(status: .noContent)
    }
}

func deviceNotFound(_ id: String) -> APIError { APIError.notFound("device_not_found", "no device '\(id)'") }

/// A decoded JSON object handed to a store's operation: `JSONSerialization`'s values are not marked `Sendable`, but
/// this one is only read.
struct JSONBody: @unchecked Sendable {
    let object: [String: Any]
    init(_ object: [String: Any]) { self.object = object }
}

/// The body as a JSON object, within the size limit.
func jsonObject(_ request: Request, _ context: APIContext) async throws -> [String: Any] {
    try jsonObject(try await request.body.collect(upTo: context.maxUploadSize))
}

func jsonObject(_ buffer: ByteBuffer) throws -> [String: Any] {
    guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: buffer)) as? [String: Any] else {
        throw APIError.badRequest("bad_json", "the body must be a JSON object")
    }
    return object
}
