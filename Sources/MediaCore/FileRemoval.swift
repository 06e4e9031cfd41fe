#if canImport(FoundationEssentials)
internal import FoundationEssentials
#else
internal import Foundation
#endif
import SystemPackage

/// The two file-system verbs swift-system does not wrap: rename and remove.
enum FileRemoval {
    /// Moves `source` to `destination`, replacing a file already there; returns the error, if any.
    static func rename(_ source: String, to destination: String) -> Errno? {
        let manager = FileManager.default
        do {
            if manager.fileExists(atPath: destination) { try manager.removeItem(atPath: destination) }
            try manager.moveItem(atPath: source, toPath: destination)
            return nil
        } catch {
            return .ioError
        }
    }

    /// Deletes `path`; returns whether it is gone.
    static func remove(_ path: String) -> Bool {
        (try? FileManager.default.removeItem(atPath: path)) != nil
    }
}
