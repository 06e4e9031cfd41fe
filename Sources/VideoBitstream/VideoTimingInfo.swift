/// The timing fields of a VUI (ITU-T H.264 E.1.1 `timing_info_present_flag`, H.265 E.2.1
/// `vui_timing_info_present_flag`): a clock of `timeScale` ticks per second, and the number of
/// ticks of one clock tick.
public struct VideoTimingInfo: Sendable, Hashable {
    /// `num_units_in_tick` / `vui_num_units_in_tick`.
    public var numUnitsInTick: UInt32
    /// `time_scale` / `vui_time_scale`.
    public var timeScale: UInt32
    /// H.264 `fixed_frame_rate_flag`; `nil` for H.265, whose VUI has no such flag.
    public var fixedFrameRate: Bool?

    /// Timing fields as read.
    public init(numUnitsInTick: UInt32, timeScale: UInt32, fixedFrameRate: Bool?) {
        self.numUnitsInTick = numUnitsInTick
        self.timeScale = timeScale
        self.fixedFrameRate = fixedFrameRate
    }
}
