// Injecting another plugin's service: import its contract token from that plugin's contract, list the plugin in dependsOn.
import { Classifier } from "nms-core/contracts/inventory";
import { Inject, Injectable } from "nms-core/tsed";

@Injectable()
export class VendorLabeler {
  @Inject(Classifier)
  private classifier: Classifier;

  async vendorOf(sysObjectId: string, sysDescr: string): Promise<string> {
    return (await this.classifier.classify(sysObjectId, sysDescr))?.vendor ?? "unknown";
  }
}
