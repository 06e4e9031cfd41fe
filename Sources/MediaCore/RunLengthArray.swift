/// An ordered list that keeps a run of equal elements once, with its length: a list that names
/// one thing many times in a row (a playlist naming one segment again and again) costs one entry
/// per run, not one per element.
///
/// Indices are the elements' positions from 0, as an array's. Reading one by index is a binary
/// search over the runs (so are algorithms that go by index, such as `map`); `for`…`in` and
/// ``runs`` read the runs in order.
public struct RunLengthArray<Element: Equatable> {
    /// One run: `element`, `count` times in a row.
    public struct Run {
        /// The element repeated.
        public var element: Element
        /// How many times in a row (at least 1).
        public var count: Int
    }

    /// The runs, in order; no two in a row hold equal elements.
    public private(set) var runs: [Run] = []
    /// For each run, the number of elements up to and including it.
    private var ends: [Int] = []

    /// An empty list.
    public init() {}

    /// The elements of `elements`, in order.
    public init<Elements: Sequence<Element>>(_ elements: Elements) {
        append(contentsOf: elements)
    }

    /// Adds `element` `count` times at the end (nothing for a count of 0).
    ///
    /// - Precondition: `count` is not negative, and the list's length stays within `Int`.
    public mutating func append(_ element: Element, count: Int = 1) {
        precondition(count >= 0, "a negative run")
        guard count > 0 else { return }
        let (end, overflow) = (ends.last ?? 0).addingReportingOverflow(count)
        precondition(!overflow, "a list longer than Int.max")
        if let last = runs.last, last.element == element {
            runs[runs.count - 1].count += count
            ends[ends.count - 1] = end
        } else {
            runs.append(Run(element: element, count: count))
            ends.append(end)
        }
    }

    /// Adds the elements of `elements` at the end, in order.
    public mutating func append<Elements: Sequence<Element>>(contentsOf elements: Elements) {
        if let other = elements as? Self {
            for run in other.runs { append(run.element, count: run.count) }
        } else {
            for element in elements { append(element) }
        }
    }

    /// The list, then the elements of `right`.
    public static func + <Elements: Sequence<Element>>(left: Self, right: Elements) -> Self {
        var result = left
        result.append(contentsOf: right)
        return result
    }
}

extension RunLengthArray: RandomAccessCollection {
    /// 0.
    public var startIndex: Int { 0 }
    /// The number of elements.
    public var endIndex: Int { ends.last ?? 0 }

    /// The element at `position`.
    public subscript(position: Int) -> Element {
        precondition(position >= 0 && position < endIndex, "index out of range")
        // The first run that ends after the position.
        var low = 0, high = ends.count
        while low < high {
            let middle = (low + high) / 2
            if ends[middle] <= position { low = middle + 1 } else { high = middle }
        }
        return runs[low].element
    }

    /// Reads the runs in order, each element `count` times.
    public struct Iterator: IteratorProtocol {
        private let runs: [Run]
        private var run = 0
        private var left = 0

        fileprivate init(runs: [Run]) {
            self.runs = runs
            left = runs.first?.count ?? 0
        }

        /// The next element, or `nil` at the end.
        public mutating func next() -> Element? {
            while run < runs.count {
                if left > 0 {
                    left -= 1
                    return runs[run].element
                }
                run += 1
                left = run < runs.count ? runs[run].count : 0
            }
            return nil
        }
    }

    /// An iterator over the elements.
    public func makeIterator() -> Iterator { Iterator(runs: runs) }
}

extension RunLengthArray: ExpressibleByArrayLiteral {
    /// The elements listed.
    public init(arrayLiteral elements: Element...) { self.init(elements) }
}

extension RunLengthArray: Equatable {
    /// The same elements in the same order (the runs are then equal too).
    public static func == (left: Self, right: Self) -> Bool {
        left.runs == right.runs
    }
}

extension RunLengthArray: Sendable where Element: Sendable {}
extension RunLengthArray.Run: Sendable where Element: Sendable {}
extension RunLengthArray.Run: Equatable {}
extension RunLengthArray.Iterator: Sendable where Element: Sendable {}
