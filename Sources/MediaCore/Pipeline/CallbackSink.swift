/// A sink that hands each element to a closure: the way out of a pipeline to an app's own code
/// (as a recorder's packet callback does).
public struct CallbackSink<Element>: MediaSink {
    private let deliver: (Element) -> Void

    /// A sink calling `deliver` with each element.
    public init(_ deliver: @escaping (Element) -> Void) {
        self.deliver = deliver
    }

    /// Calls the closure.
    public mutating func write(_ element: Element) { deliver(element) }
    /// Nothing to finish.
    public mutating func finish() {}
    /// Nothing to cancel.
    public mutating func cancel() {}
}

extension CallbackSink: PacketSink where Element == MediaSample {}
extension CallbackSink: PCMSink where Element == PCMBuffer {}
