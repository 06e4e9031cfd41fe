internal import Synchronization

/// A name stored once per process and referred to by number, so that an identifier that travels
/// with every sample (the codec of a ``FormatDescription``) is copied, compared and hashed as an
/// integer, as cheaply as an enum case, rather than retaining a string each time a sample is.
///
/// Names are never forgotten: the table grows by each distinct name the process meets (the
/// codecs it knows, and one per unknown sample-entry code in the files it reads), a few dozen
/// bytes each.
struct InternedName: Sendable, Hashable {
    private let index: UInt32

    /// The number of `name`, interned now if it was not before.
    init(_ name: String) { index = Table.shared.index(of: name) }

    /// The name.
    var string: String { Table.shared.name(at: index) }

    /// The names met so far, and their numbers.
    private final class Table: Sendable {
        static let shared = Table()
        private let state = Mutex<(names: [String], indices: [String: UInt32])>(([], [:]))

        func index(of name: String) -> UInt32 {
            state.withLock { state in
                if let index = state.indices[name] { return index }
                let index = UInt32(truncatingIfNeeded: state.names.count)
                state.names.append(name)
                state.indices[name] = index
                return index
            }
        }

        func name(at index: UInt32) -> String { state.withLock { $0.names[Int(index)] } }
    }
}
