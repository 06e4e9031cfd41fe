import Foundation

/// The process's working directory, for resolving relative paths.
enum FileSystemPath {
    static var current: String { FileManager.default.currentDirectoryPath }
}
