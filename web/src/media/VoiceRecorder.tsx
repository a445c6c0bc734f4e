/**
 * "Record voice note": records the microphone (MediaRecorder) while showing the elapsed time;
 * "Stop" attaches the recording as an audio file (kind audio), "Cancel" throws it away.
 */
import { useEffect, useRef, useState } from 'react';
import type { PendingAttachments } from './attachments';

/** The first container the browser records in (Chromium and Firefox: WebM/Opus; Safari: MP4/AAC). */
const FORMATS = [
  { mime: 'audio/webm;codecs=opus', type: 'audio/webm', ext: 'webm' },
  { mime: 'audio/ogg;codecs=opus', type: 'audio/ogg', ext: 'ogg' },
  { mime: 'audio/mp4', type: 'audio/mp4', ext: 'm4a' },
];

interface Recording {
  recorder: MediaRecorder;
  stream: MediaStream;
  chunks: Blob[];
  startedAt: number;
  format: (typeof FORMATS)[number];
}

export function VoiceRecorder({ attachments }: { attachments: PendingAttachments }) {
  const [recording, setRecording] = useState<Recording | undefined>();
  const [elapsed, setElapsed] = useState(0);
  const [error, setError] = useState<string | undefined>();
  const keep = useRef(false);

  useEffect(() => {
    if (!recording) return;
    const timer = setInterval(() => setElapsed(Math.floor((Date.now() - recording.startedAt) / 1000)), 250);
    return () => clearInterval(timer);
  }, [recording]);

  // Leaving the chat mid-recording releases the microphone and keeps nothing.
  const active = useRef<Recording | undefined>(undefined);
  active.current = recording;
  useEffect(
    () => () => {
      keep.current = false;
      if (active.current?.recorder.state === 'recording') active.current.recorder.stop();
    },
    [],
  );

  if (typeof MediaRecorder === 'undefined' || !navigator.mediaDevices?.getUserMedia) return null;

  async function start() {
    setError(undefined);
    let stream: MediaStream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch {
      setError('The microphone is not available (permission denied or no device).');
      return;
    }
    const format = FORMATS.find((f) => MediaRecorder.isTypeSupported(f.mime)) ?? FORMATS[0]!;
    const recorder = new MediaRecorder(
      stream,
      MediaRecorder.isTypeSupported(format.mime) ? { mimeType: format.mime } : {},
    );
    const next: Recording = { recorder, stream, chunks: [], startedAt: Date.now(), format };
    recorder.ondataavailable = (event) => {
      if (event.data.size > 0) next.chunks.push(event.data);
    };
    recorder.onstop = () => {
      for (const track of stream.getTracks()) track.stop();
      if (!keep.current) return;
      const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
      const file = new File(next.chunks, `voice-note-${stamp}.${format.ext}`, { type: format.type });
      attachments.add([file], 'audio');
    };
    keep.current = false;
    recorder.start(250);
    setElapsed(0);
    setRecording(next);
  }

  function finish(save: boolean) {
    if (!recording) return;
    keep.current = save;
    const current = recording;
    setRecording(undefined);
    current.recorder.stop();
  }

  if (recording) {
    return (
      <div className="voice-recording" role="group" aria-label="Recording voice note">
        <span className="recording-dot" aria-hidden="true" />
        <span role="timer" aria-label="Recording time" data-testid="recording-time">
          {Math.floor(elapsed / 60)}:{String(elapsed % 60).padStart(2, '0')}
        </span>
        <button type="button" className="primary" onClick={() => finish(true)}>
          Stop
        </button>
        <button type="button" className="quiet" onClick={() => finish(false)}>
          Cancel
        </button>
      </div>
    );
  }
  return (
    <>
      <button type="button" className="icon-button" aria-label="Record voice note" onClick={() => void start()}>
        <svg aria-hidden="true" viewBox="0 0 24 24" width="20" height="20" className="icon">
          <rect x="9" y="3" width="6" height="11" rx="3" />
          <path d="M5 11a7 7 0 0 0 14 0M12 18v3M8.5 21h7" />
        </svg>
      </button>
      {error && (
        <p className="pending-error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}
