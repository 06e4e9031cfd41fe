internal import Dispatch
internal import Synchronization

/// A ``Pump`` run on a thread of its own, for a live source (a capture device) whose `next()`
/// waits for data: the caller goes on (a meter, a signal wait) and ``join()``s it at the end.
///
/// The source and sink move to the thread: nobody else touches them until ``join()`` returns,
/// which is what makes handing non-Sendable values over sound here.
package final class PumpThread: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let outcome = Mutex<Result<JobReport, PipelineError>?>(nil)

    /// Starts pumping `source` into `sink`; `onFailure` is called on the thread when the pump
    /// fails (the sink was cancelled by then).
    package init<Source: MediaSource, Sink: MediaSink>(source: Source, sink: Sink, control: JobControl? = nil,
                                               onFailure: @escaping @Sendable (PipelineError) -> Void)
    where Source.Element == Sink.Element {
        var source = source, sink = sink
        let job = Transfer<() -> Result<JobReport, PipelineError>> {
            do throws(PipelineError) { return .success(try Pump.run(from: &source, into: &sink, control: control)) } catch {
                return .failure(error)
            }
        }
        DispatchQueue(label: "KeyFrameKit.PumpThread").async { [self] in
            let result = job.take()()
            if case .failure(let error) = result { onFailure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
    }

    /// Waits for the pump to end (its source ended) and returns what it did.
    package func join() -> Result<JobReport, PipelineError> {
        done.wait()
        done.signal()
        return outcome.withLock { $0 }!
    }
}
