/** Sites, departments and teams of the demo organisation. Addresses are invented. */
export interface SiteTemplate {
  city: string;
  timezone: string;
  currency: string;
  phonePrefix: string;
  address: string;
}

export const SITES: readonly SiteTemplate[] = [
  { city: 'Berlin', timezone: 'Europe/Berlin', currency: 'EUR', phonePrefix: '+49 30', address: 'Lindenallee 12, 10117 Berlin, Germany' },
  {
    city: 'London',
    timezone: 'Europe/London',
    currency: 'GBP',
    phonePrefix: '+44 20',
    address: '40 Bishopsgate Row, London EC2N 4AY, United Kingdom',
  },
  {
    city: 'New York',
    timezone: 'America/New_York',
    currency: 'USD',
    phonePrefix: '+1 212',
    address: '225 Hudson Yard Street, New York, NY 10001, United States',
  },
  {
    city: 'São Paulo',
    timezone: 'America/Sao_Paulo',
    currency: 'BRL',
    phonePrefix: '+55 11',
    address: 'Rua das Palmeiras 880, São Paulo, SP 01226-010, Brazil',
  },
  {
    city: 'Singapore',
    timezone: 'Asia/Singapore',
    currency: 'SGD',
    phonePrefix: '+65',
    address: '18 Harbour Front Walk, Singapore 098632',
  },
  {
    city: 'Sydney',
    timezone: 'Australia/Sydney',
    currency: 'AUD',
    phonePrefix: '+61 2',
    address: '77 Kent Lane, Sydney NSW 2000, Australia',
  },
  {
    city: 'Toronto',
    timezone: 'America/Toronto',
    currency: 'CAD',
    phonePrefix: '+1 416',
    address: '310 King Street West, Toronto, ON M5V 1J2, Canada',
  },
  {
    city: 'Tokyo',
    timezone: 'Asia/Tokyo',
    currency: 'JPY',
    phonePrefix: '+81 3',
    address: '2-4-1 Marunouchi Garden, Chiyoda-ku, Tokyo 100-0005, Japan',
  },
  {
    city: 'Bengaluru',
    timezone: 'Asia/Kolkata',
    currency: 'INR',
    phonePrefix: '+91 80',
    address: '42 Residency Road, Bengaluru 560025, India',
  },
  { city: 'Paris', timezone: 'Europe/Paris', currency: 'EUR', phonePrefix: '+33 1', address: '19 rue des Archives, 75004 Paris, France' },
  {
    city: 'Madrid',
    timezone: 'Europe/Madrid',
    currency: 'EUR',
    phonePrefix: '+34 91',
    address: 'Calle de Alcalá 155, 28009 Madrid, Spain',
  },
  {
    city: 'Chicago',
    timezone: 'America/Chicago',
    currency: 'USD',
    phonePrefix: '+1 312',
    address: '600 West Lake Street, Chicago, IL 60661, United States',
  },
  {
    city: 'Dublin',
    timezone: 'Europe/Dublin',
    currency: 'EUR',
    phonePrefix: '+353 1',
    address: '5 Grand Canal Quay, Dublin 2, D02 X576, Ireland',
  },
  {
    city: 'Amsterdam',
    timezone: 'Europe/Amsterdam',
    currency: 'EUR',
    phonePrefix: '+31 20',
    address: 'Keizersgracht 310, 1016 EX Amsterdam, Netherlands',
  },
  {
    city: 'Mexico City',
    timezone: 'America/Mexico_City',
    currency: 'MXN',
    phonePrefix: '+52 55',
    address: 'Paseo de la Reforma 350, Juárez, 06600 Ciudad de México, Mexico',
  },
  {
    city: 'Cape Town',
    timezone: 'Africa/Johannesburg',
    currency: 'ZAR',
    phonePrefix: '+27 21',
    address: '14 Dock Road, V&A Waterfront, Cape Town 8001, South Africa',
  },
];

export interface DepartmentTemplate {
  name: string;
  teams: readonly string[];
  titles: readonly string[];
}

/** Ordered so that the rotation in the locations generator puts IT and Finance in a scale-1 picture. */
export const DEPARTMENTS: readonly DepartmentTemplate[] = [
  {
    name: 'Engineering',
    teams: ['Platform', 'Mobile', 'Web', 'Data', 'Infrastructure', 'Quality'],
    titles: [
      'Software Engineer',
      'Senior Software Engineer',
      'Staff Engineer',
      'QA Engineer',
      'Data Engineer',
      'Site Reliability Engineer',
    ],
  },
  {
    name: 'Sales',
    teams: ['Enterprise Sales', 'Mid-Market Sales', 'Sales Development', 'Partnerships', 'Renewals', 'Solutions Consulting'],
    titles: ['Account Executive', 'Sales Development Representative', 'Solutions Consultant', 'Account Manager', 'Partner Manager'],
  },
  {
    name: 'Finance',
    teams: ['Accounts Payable', 'Payroll', 'FP&A', 'Procurement', 'Tax', 'Treasury'],
    titles: ['Accountant', 'Financial Analyst', 'Payroll Specialist', 'Procurement Specialist', 'Controller'],
  },
  {
    name: 'People',
    teams: ['Recruiting', 'People Operations', 'Learning & Development', 'Total Rewards', 'Employee Experience', 'HR Business Partners'],
    titles: ['Recruiter', 'People Partner', 'HR Generalist', 'Learning Specialist', 'Compensation Analyst'],
  },
  {
    name: 'Operations',
    teams: ['Logistics', 'Warehouse', 'Field Service', 'Fleet', 'Customer Operations', 'Supply Planning'],
    titles: ['Operations Coordinator', 'Warehouse Associate', 'Field Technician', 'Fleet Coordinator', 'Logistics Planner'],
  },
  {
    name: 'IT',
    teams: ['Service Desk', 'End-User Computing', 'Security', 'Identity & Access', 'Network', 'Business Applications'],
    titles: ['IT Support Specialist', 'Systems Administrator', 'Security Engineer', 'Network Engineer', 'IT Asset Coordinator'],
  },
  {
    name: 'Facilities',
    teams: ['Workplace', 'Maintenance', 'Reception', 'Health & Safety', 'Real Estate', 'Catering'],
    titles: ['Facilities Coordinator', 'Maintenance Technician', 'Receptionist', 'Health & Safety Officer', 'Workplace Manager'],
  },
  {
    name: 'Marketing',
    teams: ['Brand', 'Content', 'Growth', 'Product Marketing', 'Events', 'Communications'],
    titles: ['Marketing Manager', 'Content Writer', 'Growth Analyst', 'Product Marketing Manager', 'Designer'],
  },
];

/** Approximate units of each currency per US dollar, so amounts look plausible everywhere. */
export const CURRENCY_PER_USD: Readonly<Record<string, number>> = {
  USD: 1,
  EUR: 0.92,
  GBP: 0.79,
  BRL: 5,
  SGD: 1.35,
  AUD: 1.5,
  CAD: 1.36,
  JPY: 150,
  INR: 83,
  MXN: 17,
  ZAR: 18,
};

/** ISO 4217 minor-unit exponent: the yen has no minor unit. */
export function minorUnitDigits(currency: string): number {
  return currency === 'JPY' ? 0 : 2;
}

/**
 * A US-dollar amount in `currency`, in minor units, rounded to a price a human would quote
 * (two significant digits for small amounts, three above).
 */
export function moneyMinor(usd: number, currency: string): number {
  const major = usd * (CURRENCY_PER_USD[currency] ?? 1);
  const digits = Math.max(0, Math.floor(Math.log10(Math.max(major, 1))) - (major >= 1000 ? 2 : 1));
  const rounded = Math.max(1, Math.round(major / 10 ** digits) * 10 ** digits);
  return rounded * 10 ** minorUnitDigits(currency);
}

export function timezoneCurrency(timezone: string): string {
  return SITES.find((s) => s.timezone === timezone)?.currency ?? 'USD';
}
