/// A sink that hands each element to a closure: the way out of a pipeline to an app's own code
/// (as a live encoding's packet callback does).
///
/// The closure is `@Sendable`: the sink runs on the pump's thread, not the one that made it.
/// (A closure made in `@MainActor` code, such as a program's top level, would otherwise be
/// taken for the main actor's and stop the program when the pump calls it.)
public struct CallbackSink<Element>: MediaSink {
    private let deliver: @Sendable (Element) -> Void

    /// A sink calling `deliver` with each element, on the thread that writes to the sink.
    public init(_ deliver: @escaping @Sendable (Element) -> Void) {
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
