/// Hands one non-`Sendable` value (a sink, a pipeline) to another thread, once: the one
/// `@unchecked Sendable` type of the pipeline.
///
/// Why it is safe: the value is stored by the thread that makes the box, before the box is
/// shared, and read once, by ``take()``, on the thread it is handed to (which the pump thread and
/// a threaded sink do first thing). The maker keeps no reference to the value itself, so after
/// the hand-over exactly one thread can reach it: the public way in, ``ThreadedSink`` (and so a
/// threaded ``Tee`` branch), takes its sink and its `whenFinished` as `sending`, so the compiler
/// refuses a caller that keeps anything the sink holds; the package's own pump threads are
/// given pipelines their makers drop. `take()` a second time is a programming error and traps.
package final class Transfer<Value>: @unchecked Sendable {
    private var value: Value?

    /// A box holding `value`, which the caller gives up.
    package init(_ value: consuming Value) { self.value = value }

    /// The value, moved out of the box.
    package func take() -> Value {
        guard let taken = value.take() else { preconditionFailure("a transferred value is taken once") }
        return taken
    }
}
