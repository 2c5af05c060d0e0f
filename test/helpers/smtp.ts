/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package) that keeps what it receives, and
 * can be told to refuse recipients or data with a given reply, as a mail provider would.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The raw message: headers and body. */
  raw: string;
}

export type Refusal = { at: 'rcpt' | 'data'; code: number; message: string } | undefined;

export class SmtpSink {
  readonly mails: ReceivedMail[] = [];
  /** Replies to the next transactions with this error until cleared. */
  refuse: Refusal;
  readonly logins: { username: string; password: string }[] = [];
  private server: SMTPServer | undefined;

  async start(): Promise<this> {
    this.server = new SMTPServer({
      secure: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authOptional: true,
      logger: false,
      onAuth: (auth, _session, done) => {
        this.logins.push({ username: auth.username ?? '', password: auth.password ?? '' });
        done(null, { user: auth.username });
      },
      onRcptTo: (_address, _session, done) => {
        if (this.refuse?.at === 'rcpt') return done(Object.assign(new Error(this.refuse.message), { responseCode: this.refuse.code }));
        done();
      },
      onData: (stream: SMTPServerDataStream, session, done) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (this.refuse?.at === 'data') return done(Object.assign(new Error(this.refuse.message), { responseCode: this.refuse.code }));
          this.mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    const address = this.server?.server.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('SMTP server not started');
    return address.port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** The decoded text body of a plain-text mail (nodemailer encodes long lines quoted-printable). */
export function mailText(raw: string): string {
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  return /content-transfer-encoding:\s*quoted-printable/i.test(raw)
    ? body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)))
    : body;
}

/** The decoded Subject header. */
export function mailSubject(raw: string): string {
  const line = /^Subject: (.*(?:\r\n[ \t].*)*)/im.exec(raw)?.[1] ?? '';
  return line
    .replace(/\r\n[ \t]/g, ' ')
    .replace(/=\?utf-8\?Q\?(.*?)\?=/gi, (_m, q: string) =>
      q.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/g, (_x, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
    );
}
