#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The process's working directory, for resolving relative paths.
enum FileSystemPath {
    static var current: String { FileManager.default.currentDirectoryPath }
}
