/** The invented things the demo organisation buys, uses, learns and records. */

export type VendorCategory = 'SOFTWARE' | 'HARDWARE' | 'SERVICES' | 'FACILITIES' | 'OTHER';
export type SystemCategory = 'PRODUCTIVITY' | 'ENGINEERING' | 'FINANCE' | 'HR' | 'SALES' | 'SECURITY' | 'OTHER';

/** Software vendors double as the systems they sell, so a system's vendor has a matching name. */
export const SOFTWARE_VENDORS: readonly { name: string; system: SystemCategory; seatUsd: number }[] = [
  { name: 'Atlas CRM', system: 'SALES', seatUsd: 75 },
  { name: 'Beacon Analytics', system: 'ENGINEERING', seatUsd: 30 },
  { name: 'Cirrus Docs', system: 'PRODUCTIVITY', seatUsd: 12 },
  { name: 'Driftwood Chat', system: 'PRODUCTIVITY', seatUsd: 8 },
  { name: 'Evergreen HRIS', system: 'HR', seatUsd: 9 },
  { name: 'Foundry CI', system: 'ENGINEERING', seatUsd: 21 },
  { name: 'Glacier Backup', system: 'SECURITY', seatUsd: 6 },
  { name: 'Helix Design', system: 'PRODUCTIVITY', seatUsd: 15 },
  { name: 'Ironclad Identity', system: 'SECURITY', seatUsd: 7 },
  { name: 'Juniper Payroll', system: 'FINANCE', seatUsd: 11 },
  { name: 'Keystone ERP', system: 'FINANCE', seatUsd: 90 },
  { name: 'Lumen Video', system: 'PRODUCTIVITY', seatUsd: 14 },
  { name: 'Meridian Expense', system: 'FINANCE', seatUsd: 10 },
  { name: 'Nimbus Helpdesk', system: 'OTHER', seatUsd: 49 },
  { name: 'Orbit Recruiting', system: 'HR', seatUsd: 35 },
  { name: 'Pulse Dialer', system: 'SALES', seatUsd: 40 },
];

export const OTHER_VENDORS: Readonly<Record<Exclude<VendorCategory, 'SOFTWARE'>, readonly string[]>> = {
  HARDWARE: ['Apex Computers', 'Brightline Displays', 'Coastal Mobile', 'Dynamo Printers', 'Forge Tools', 'Keyline Peripherals'],
  SERVICES: [
    'Harbor Legal',
    'Keel Security Audit',
    'Lighthouse Recruiting',
    'Northstar Consulting',
    'Quill Translation',
    'Summit Training',
  ],
  FACILITIES: ['CleanSweep Janitorial', 'Fresh Fields Catering', 'Greenleaf Plants', 'Ironside Guarding', 'Metro Waste', 'Polar HVAC'],
  OTHER: ['Cargo Couriers', 'Pinnacle Insurance', 'Tandem Events', 'Wayfarer Travel', 'Brightpath Wellness'],
};

/** Systems the organisation runs itself (no vendor). */
export const IN_HOUSE_SYSTEMS: Readonly<Record<SystemCategory, readonly string[]>> = {
  PRODUCTIVITY: ['Intranet', 'Meeting Room Display Service', 'Company Wiki'],
  ENGINEERING: ['Deploy Pipeline', 'Feature Flag Service', 'Data Warehouse', 'Build Cache'],
  FINANCE: ['Billing Service', 'Revenue Reports', 'Invoice Archive'],
  HR: ['Org Chart Service', 'Onboarding Portal'],
  SALES: ['Quote Builder', 'Partner Portal', 'Price Book'],
  SECURITY: ['Badge Access Control', 'VPN Gateway', 'Secrets Vault'],
  OTHER: ['Warehouse Scanner App', 'Fleet Tracker', 'Visitor Kiosk'],
};

export type AssetCategory = 'LAPTOP' | 'PHONE' | 'MONITOR' | 'VEHICLE' | 'TOOL' | 'FURNITURE' | 'OTHER';

export const ASSET_MODELS: Readonly<Record<AssetCategory, readonly string[]>> = {
  LAPTOP: ['MacBook Pro 14" M3', 'MacBook Air 13" M2', 'ThinkPad X1 Carbon Gen 11', 'Dell Latitude 7440', 'HP EliteBook 840 G10'],
  PHONE: ['iPhone 15', 'iPhone 14', 'Pixel 8', 'Galaxy S23', 'Galaxy XCover 6 Pro'],
  MONITOR: ['Dell UltraSharp U2723QE 27"', 'LG 27UL850 27"', 'Samsung ViewFinity S8 32"', 'BenQ PD2705U 27"'],
  VEHICLE: ['Ford Transit Custom', 'Toyota Corolla Hybrid', 'Volkswagen ID.4', 'Renault Kangoo E-Tech'],
  TOOL: ['Bosch GSR 18V cordless drill', 'Fluke 117 multimeter', 'Torque wrench set', 'Laser level Leica Lino L2', 'Pallet jack 2.5 t'],
  FURNITURE: ['Standing desk 160x80', 'Ergonomic task chair', 'Lockable pedestal', 'Meeting table 8 seats'],
  OTHER: ['YubiKey 5 NFC', 'Epson EB-L200F projector', 'Jabra Evolve2 65 headset', 'Conference speakerphone', 'Label printer'],
};

export type ContentKind = 'POLICY' | 'COURSE';

/** The learning catalogue; content ids are derived per workspace from the position in this list. */
export const LEARNING_CONTENT: readonly { title: string; kind: ContentKind }[] = [
  { title: 'Code of Conduct', kind: 'POLICY' },
  { title: 'Security Awareness Fundamentals', kind: 'COURSE' },
  { title: 'Information Security Policy', kind: 'POLICY' },
  { title: 'Phishing Awareness', kind: 'COURSE' },
  { title: 'Acceptable Use Policy', kind: 'POLICY' },
  { title: 'Data Protection Essentials', kind: 'COURSE' },
  { title: 'Data Protection and Privacy Policy', kind: 'POLICY' },
  { title: 'Fire Warden Training', kind: 'COURSE' },
  { title: 'Anti-Bribery and Corruption Policy', kind: 'POLICY' },
  { title: 'Manual Handling', kind: 'COURSE' },
  { title: 'Health and Safety Policy', kind: 'POLICY' },
  { title: 'First Aid at Work', kind: 'COURSE' },
  { title: 'Remote Work Policy', kind: 'POLICY' },
  { title: 'Inclusive Hiring', kind: 'COURSE' },
];

export type HandoverKind = 'HOLIDAY' | 'SHIFT' | 'ROLE';

export const HANDOVER_ITEMS: Readonly<Record<HandoverKind, readonly string[]>> = {
  HOLIDAY: [
    'Approve pending timesheets',
    'Chase the overdue invoice from Apex Computers',
    'Run the Monday stand-up',
    'Review open pull requests',
    'Answer supplier questions about the renewal',
    'Send the weekly status report',
  ],
  SHIFT: [
    'Check overnight monitoring alerts',
    'Restock visitor badges at reception',
    'Complete the opening safety walk',
    'Hand over the loading-dock keys',
    'Follow up on the delayed delivery',
    'Log fridge temperatures',
  ],
  ROLE: [
    'Own the vendor renewal calendar',
    'Take over the monthly finance report',
    'Become approver for IT purchases',
    'Transfer admin rights on the CRM',
    'Introduce the successor to key customers',
    'Hand over the on-call rota',
  ],
};

export const HANDOVER_NOTES = [
  'Details are in the shared folder.',
  'Ask the team channel if anything is unclear.',
  'Deadline agreed with the customer.',
  'Password is in the team vault.',
  'Only urgent items; the rest can wait.',
] as const;

export type TransitionKind = 'ONBOARDING' | 'OFFBOARDING';

/**
 * Fixed checklists (their lengths make the number of generated tasks known in advance).
 * Offboarding puts returns and access removal last: an offboarding still in progress has done
 * the early items and still lists what the person holds.
 */
export const CHECKLISTS: Readonly<Record<TransitionKind, readonly string[]>> = {
  ONBOARDING: [
    'Create accounts and email',
    'Prepare laptop and phone',
    'Assign an onboarding buddy',
    'Book the welcome session',
    'Order a building badge',
  ],
  OFFBOARDING: [
    'Hold the exit interview',
    'Transfer document ownership',
    'Confirm final payroll',
    'Collect laptop and equipment',
    'Revoke system access',
    'Deactivate the building badge',
  ],
};

export type WorkplaceType = 'INCIDENT' | 'INSPECTION' | 'VISITOR' | 'FACILITY_REQUEST' | 'DESK_BOOKING';

export const WORKPLACE_TITLES: Readonly<Record<WorkplaceType, readonly string[]>> = {
  INCIDENT: [
    'Slip on wet floor near reception',
    'Cut finger in the kitchen',
    'Broken window in a meeting room',
    'Minor collision in the car park',
    'Power outage on floor {floor}',
  ],
  INSPECTION: [
    'Quarterly fire extinguisher inspection',
    'Lift safety inspection',
    'First aid kit check',
    'Emergency lighting test',
    'Ladder inspection',
  ],
  VISITOR: [
    'Visitor from Northstar Consulting',
    'Candidate interview visit',
    'Auditor visit',
    'Customer workshop guests',
    'Contractor for HVAC service',
  ],
  FACILITY_REQUEST: [
    'Air conditioning too cold on floor {floor}',
    'Replace flickering light in room {room}',
    'Extra chairs for the town hall',
    'Fix the dripping tap in the kitchen',
    'Whiteboard markers needed in room {room}',
  ],
  DESK_BOOKING: ['Desk {floor}.{desk} booked', 'Quiet room desk {floor}.{desk} booked', 'Standing desk {floor}.{desk} booked'],
};

export const WORKPLACE_DESCRIPTIONS: Readonly<Record<WorkplaceType, readonly string[]>> = {
  INCIDENT: ['No injury reported; area cordoned off.', 'First aid given on site.', 'Reported to the health and safety officer.'],
  INSPECTION: ['All items passed.', 'Two items need follow-up.', 'Certificate uploaded to the facilities folder.'],
  VISITOR: ['Badge printed at reception.', 'Escort required in secure areas.', 'Parking space reserved.'],
  FACILITY_REQUEST: ['Reported by several people.', 'Contractor visit scheduled.', 'Temporary fix in place.'],
  DESK_BOOKING: ['Booked for the whole day.', 'Morning only.', 'Booked with monitor.'],
};

/** Purchase request titles; `{team}`, `{site}`, `{vendor}` and `{n}` are filled in. */
export const PURCHASE_TEMPLATES: readonly { title: string; usd: readonly [number, number]; usesVendor: boolean }[] = [
  { title: 'Laptop refresh for {team}', usd: [4000, 30000], usesVendor: true },
  { title: 'Annual renewal: {vendor}', usd: [2000, 120000], usesVendor: true },
  { title: '{n} monitors for the {site} office', usd: [800, 6000], usesVendor: true },
  { title: 'Conference tickets for {team}', usd: [600, 5000], usesVendor: false },
  { title: 'Team offsite catering ({site})', usd: [300, 4000], usesVendor: true },
  { title: 'Ergonomic chairs for {team}', usd: [1500, 9000], usesVendor: true },
  { title: 'Security audit engagement', usd: [12000, 60000], usesVendor: true },
  { title: 'Replacement tyres for the {site} van', usd: [400, 1500], usesVendor: false },
  { title: 'Additional seats: {vendor}', usd: [500, 20000], usesVendor: true },
  { title: 'Training budget for {team}', usd: [1000, 8000], usesVendor: false },
];

export const PURCHASE_DESCRIPTIONS = [
  'Budget approved in the quarterly plan.',
  'Replaces equipment that is out of warranty.',
  'Quote attached; price valid for 30 days.',
  'Needed before the next hiring wave.',
  'Cheapest of three quotes.',
] as const;
