// An AudioWorklet that keeps every frame it is given (channel 0) until asked for them: what a
// media element played, frame by frame, behind createMediaElementSource (scripts/browser-gapless.py).
class Capture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.chunks = [];
    this.port.onmessage = () => this.port.postMessage(this.chunks);
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (channel) this.chunks.push(channel.slice());
    return true;
  }
}
registerProcessor('capture', Capture);
