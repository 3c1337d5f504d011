/**
 * Sends a report (subject, text body, attachments) through a notification channel, for the reports plugin.
 * Only the `email` kind carries attachments: it sends over the channel's SMTP transport to the channel's
 * recipients. Any other kind answers a DeliveryError (not retryable). Failure messages never carry the host,
 * the user name or the password (the email kind's own mapping).
 */
import { Inject, Injectable } from "@tsed/di";
import { DeliveryError, type ReportDelivery, type ReportMessage } from "../contract.js";
import { emailTransport, smtpFailure, type EmailConfig } from "../kinds/email.js";
import { ChannelService } from "./ChannelService.js";

@Injectable()
export class ReportDeliveryService implements ReportDelivery {
  @Inject(ChannelService)
  private channels: ChannelService;

  /** Sends `message` through channel `channelId`; throws DeliveryError (no channel, disabled, a kind without attachments, SMTP failure). */
  async send(channelId: string, message: ReportMessage, signal: AbortSignal = AbortSignal.timeout(60000)): Promise<void> {
    const found = await this.channels.forSend(channelId);
    if (!found) throw new DeliveryError("no such channel", "not_found", { retryable: false });
    if (!found.row.enabled) throw new DeliveryError("channel disabled", "disabled", { retryable: false });
    if (found.row.kind !== "email") throw new DeliveryError(`channel kind ${found.row.kind} cannot carry a report`, "unsupported_kind", { retryable: false });
    const c = found.channel.config as unknown as EmailConfig;
    const secrets = [c.password, c.username, c.host].filter((s): s is string => typeof s === "string" && s.length > 0);
    const transport = emailTransport(c);
    try {
      await transport.sendMail({
        from: c.from,
        to: c.to,
        subject: message.subject.replace(/[\r\n]+/g, " "),
        text: message.text,
        attachments: message.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content })),
        signal,
      });
    } catch (err) {
      throw smtpFailure(err, signal, secrets);
    } finally {
      transport.close();
    }
  }
}
