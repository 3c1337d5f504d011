// Injecting another plugin's service: import it from that plugin's contract, list the plugin in dependsOn.
import { ClassifierService } from "nms-core/contracts/inventory";
import { Inject, Injectable } from "nms-core/tsed";

@Injectable()
export class VendorLabeler {
  @Inject(ClassifierService)
  private classifier: ClassifierService;

  async vendorOf(sysObjectId: string, sysDescr: string): Promise<string> {
    return (await this.classifier.classify(sysObjectId, sysDescr))?.vendor ?? "unknown";
  }
}
